"""Operations built on the format layer: extract, create, edit, convert, diff, patch, ..."""

# The file `extract --manifest` writes. Here rather than in `ops.manifest` because every extract
# (a member named like it is renamed) and every `create` (it is never packed) meets the name,
# while only a manifest's reading or writing needs that module (issue 48: a plain extract
# imports no manifest code).
MANIFEST_NAME = ".gamepak-manifest.json"
