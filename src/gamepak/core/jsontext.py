"""The one JSON shape gamepak writes, in every file (translations, table sheets, manifests,
patches, undo records, glTF) and every `--json`: two-space indent."""

JSON_INDENT = 2
