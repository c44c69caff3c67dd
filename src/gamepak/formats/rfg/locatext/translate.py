"""`.rfglocatext` strings exported for translators and imported back, keyed by identifier or hash.

Translation files name each string by its identifier when one was recovered (`names`), else by
its hash (`#5a3c91f0`); importing takes an identifier's hash, or the hash as given, never the
hash of an empty name.

- JSON: a UTF-8 array of `{"hash": "5a3c91f0", "identifier": "...", "text": "..."}`
  (`identifier` is null when unknown; `source` holds the reference language's string when one
  was given).
- CSV: UTF-8 with a byte-order mark, header `hash,identifier,text` (`hash,identifier,source,text`
  with a reference language); read with or without the mark, separated by commas, semicolons or
  tabs.
- PO: `msgctxt` is the identifier or `#hash`; `msgid` the reference language's string (with
  `source`) and `msgstr` the file's, or, without a reference, `msgid` the file's string and
  `msgstr` empty. Importing uses `msgstr` when non-empty and not fuzzy, else keeps the string.
- RFGM's XML (`rfgm-xml`): `<root><Entry><Identifier/><Hash/><String/></Entry>...</root>`, the hash
  in decimal, as RFGM's archiver writes it; an import tells it by its content. A carriage return
  is written `&#xD;` so that it survives (XML readers turn a bare one into a line feed).

An import changes only the strings whose text differs (an unchanged file comes back byte for
byte), adds entries for keys the file lacks, and removes entries only with `delete`. Everything
is checked before anything is written: duplicate keys, an identifier whose hash is another
entry's, text that is not UTF-8.
"""

from __future__ import annotations

import csv
import io
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field

from ....errors import GamepakError, MemberNotFoundError
from . import EXTENSION, LocaEntry, LocaText, describe, encode_text, hash_key, identifier_hash, is_locatext

TRANSLATION_FORMATS = ("json", "csv", "po", "rfgm-xml")
CSV_DELIMITERS = (",", ";", "\t")
PACK_EXTENSIONS = (".vpp_pc", ".str2_pc")


def translation_format(path: str | os.PathLike[str] | None, explicit: str | None = None) -> str:
    """The translation format: `explicit`, else from the extension (`.xml`: RFGM's), else JSON."""
    if explicit:
        wanted = explicit.lower().lstrip(".")
        if wanted not in TRANSLATION_FORMATS:
            raise GamepakError(f"unknown translation format {explicit!r}; use one of {', '.join(TRANSLATION_FORMATS)}")
        return wanted
    if path is None:
        return "json"
    extension = os.path.splitext(os.fspath(path))[1].lower().lstrip(".")
    known = {"json": "json", "csv": "csv", "po": "po", "pot": "po", "xml": "rfgm-xml"}
    if extension in known:
        return known[extension]
    raise GamepakError(
        f"{os.fspath(path)}: cannot tell the translation format from the extension; use .json, .csv, .po or .xml"
    )


# -- export ------------------------------------------------------------------------------------


def dump_translation(
    entries: Sequence[LocaEntry], format: str, *, sources: dict[int, str] | None = None, title: str = ""
) -> bytes:
    """A translation file holding `entries`; `sources` maps hashes to a reference language's
    strings (shown beside each string)."""
    if format == "json":
        rows = []
        for entry in entries:
            row: dict[str, object] = {"hash": f"{entry.hash:08x}", "identifier": entry.identifier}
            if sources is not None:
                row["source"] = sources.get(entry.hash)
            row["text"] = entry.text
            rows.append(row)
        return (json.dumps(rows, ensure_ascii=False, indent=1) + "\n").encode("utf-8")
    if format == "csv":
        buffer = io.StringIO(newline="")
        writer = csv.writer(buffer, lineterminator="\r\n")
        with_source = sources is not None
        writer.writerow(["hash", "identifier", *(["source"] if with_source else []), "text"])
        for entry in entries:
            source = [sources.get(entry.hash, "")] if sources is not None else []
            writer.writerow([f"{entry.hash:08x}", entry.identifier or "", *source, entry.text])
        return buffer.getvalue().encode("utf-8-sig")
    if format == "po":
        return _dump_po(entries, sources, title)
    if format == "rfgm-xml":
        return _dump_rfgm_xml(entries)
    raise GamepakError(f"unknown translation format {format!r}")


def _dump_po(entries: Sequence[LocaEntry], sources: dict[int, str] | None, title: str) -> bytes:
    import polib

    po = polib.POFile(wrapwidth=0)
    po.metadata = {
        "Project-Id-Version": title or "gamepak text export",
        "MIME-Version": "1.0",
        "Content-Type": "text/plain; charset=UTF-8",
        "Content-Transfer-Encoding": "8bit",
    }
    for entry in entries:
        text = entry.text
        comment = f"hash {entry.hash:08x}" if entry.identifier is not None else ""
        if sources is None:
            po.append(polib.POEntry(msgctxt=entry.key, msgid=text, msgstr="", comment=comment))
            continue
        source = sources.get(entry.hash)
        if source is None:
            comment = "\n".join(filter(None, [comment, "not in the reference file"]))
        po.append(
            polib.POEntry(msgctxt=entry.key, msgid=text if source is None else source, msgstr=text, comment=comment)
        )
    return str(po).encode("utf-8")


def _xml_text(text: str, where: str) -> str:
    for position, character in enumerate(text):
        code = ord(character)
        if (code < 0x20 and character not in "\t\n\r") or 0xFFFE <= code <= 0xFFFF:
            raise GamepakError(f"{where}: character U+{code:04X} at position {position} cannot be written in XML")
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\r", "&#xD;")


def _dump_rfgm_xml(entries: Sequence[LocaEntry]) -> bytes:
    lines = ["<root>"]
    for index, entry in enumerate(entries):
        where = describe(index, entry.hash)
        identifier = _xml_text(entry.identifier or "", where)
        lines += [
            "  <Entry>",
            f"    <Identifier>{identifier}</Identifier>" if identifier else "    <Identifier />",
            f"    <Hash>{entry.hash}</Hash>",
            f"    <String>{_xml_text(entry.text, where)}</String>" if entry.text else "    <String />",
            "  </Entry>",
        ]
    lines.append("</root>")
    return "\n".join(lines).encode("utf-8")


# -- import ------------------------------------------------------------------------------------


@dataclass
class Row:
    """One translated string: its hash and/or identifier, its text (None: keep the file's),
    the text to use for a new entry when `text` is None, and where it was read."""

    hash: int | None
    identifier: str | None
    text: str | None
    where: str
    fallback: str | None = None


def _parse_hash(value: object, where: str) -> int | None:
    if value is None or value == "":
        return None
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 0xFFFFFFFF:
        return value
    if isinstance(value, str):
        digits = value.strip().removeprefix("#")
        if 1 <= len(digits) <= 8 and all(c in "0123456789abcdefABCDEF" for c in digits):
            return int(digits, 16)
    raise GamepakError(f"{where}: hash {value!r} is not 8 hexadecimal digits")


def _key(value: str | None, where: str) -> tuple[int | None, str | None]:
    """A PO msgctxt: `#hash`, or an identifier."""
    if not value:
        raise GamepakError(f"{where}: no msgctxt: it must hold the identifier or #hash")
    if value.startswith("#"):
        return _parse_hash(value, where), None
    return None, value


def _decode(data: bytes, where: str) -> str:
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise GamepakError(f"{where}: UTF-16 text; save it as UTF-8")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise GamepakError(f"{where}: byte {exc.start}: not UTF-8 (save the file as UTF-8)") from None


def _rows_from_json(text: str, where: str) -> list[Row]:
    try:
        document = json.loads(text)
    except ValueError as exc:
        raise GamepakError(f"{where}: not valid JSON: {exc}") from None
    if not isinstance(document, list):
        raise GamepakError(f'{where}: expected a JSON array of {{"hash", "identifier", "text"}} objects')
    rows = []
    for position, item in enumerate(document):
        location = f"{where}: item {position}"
        if not isinstance(item, dict) or not isinstance(item.get("text"), str):
            raise GamepakError(f"{location}: not an object with a string text")
        identifier = item.get("identifier")
        if identifier is not None and not isinstance(identifier, str):
            raise GamepakError(f"{location}: identifier {identifier!r} is not a string")
        rows.append(Row(_parse_hash(item.get("hash"), location), identifier or None, item["text"], location))
    return rows


def _rows_from_csv(text: str, where: str) -> list[Row]:
    header_line = text.split("\n", 1)[0].rstrip("\r")
    for delimiter in CSV_DELIMITERS:
        header = [cell.strip().strip('"').lower() for cell in header_line.split(delimiter)]
        if "text" in header and ("hash" in header or "identifier" in header):
            break
    else:
        raise GamepakError(
            f"{where}: the first row must be a header naming the columns hash, identifier and text "
            f"(commas, semicolons or tabs between them), not {header_line[:60]!r}"
        )
    try:
        records = list(csv.reader(io.StringIO(text, newline=""), delimiter=delimiter))
    except csv.Error as exc:
        raise GamepakError(f"{where}: malformed CSV: {exc}") from None
    column = {name: header.index(name) for name in ("hash", "identifier", "text") if name in header}
    rows = []
    for line, record in enumerate(records[1:], start=2):
        if not record:
            continue
        location = f"{where}: row {line}"
        if len(record) != len(header):
            raise GamepakError(
                f"{location}: {len(record)} fields, the header names {len(header)}; quote texts that hold the separator"
            )
        value = record[column["hash"]] if "hash" in column else None
        identifier = record[column["identifier"]] if "identifier" in column else None
        rows.append(Row(_parse_hash(value, location), identifier or None, record[column["text"]], location))
    return rows


def _rows_from_po(text: str, where: str) -> list[Row]:
    # As for the J2ME strings: polib reads a file (a string would split at U+0085 and U+001C..E).
    import shutil

    import polib

    from ....core.atomic import temporary_folder

    folder = temporary_folder("po")
    temporary = os.path.join(folder, "translation.po")
    try:
        with open(temporary, "wb") as handle:
            handle.write(text.encode("utf-8"))
        po = polib.pofile(temporary, encoding="utf-8")
    except (OSError, ValueError) as exc:
        raise GamepakError(f"{where}: malformed PO file: {exc}") from None
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    rows = []
    for entry in po:
        if entry.obsolete:
            continue
        location = f"{where}: line {entry.linenum}"
        hash_value, identifier = _key(entry.msgctxt, location)
        translated = entry.msgstr and "fuzzy" not in entry.flags
        rows.append(Row(hash_value, identifier, entry.msgstr if translated else None, location, fallback=entry.msgid))
    return rows


def _rows_from_rfgm_xml(data: bytes, where: str) -> list[Row]:
    from xml.etree import ElementTree

    try:
        root = ElementTree.fromstring(data)
    except ElementTree.ParseError as exc:
        raise GamepakError(f"{where}: not well-formed XML: {exc}") from None
    rows = []
    for position, element in enumerate(root.iter("Entry")):
        location = f"{where}: Entry {position}"
        identifier = element.findtext("Identifier") or None
        hash_text = element.findtext("Hash")
        hash_value = None
        if hash_text:
            if not hash_text.strip().isdigit() or int(hash_text) > 0xFFFFFFFF:
                raise GamepakError(f"{location}: Hash {hash_text!r} is not a decimal u32")
            hash_value = int(hash_text)
        rows.append(Row(hash_value, identifier, element.findtext("String") or "", location))
    return rows


def looks_like_xml(data: bytes) -> bool:
    """Whether a translation file is XML (RFGM's form), whatever its name."""
    return data.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"<")


def load_translation(data: bytes, format: str, where: str = "translation") -> list[Row]:
    """The rows of a translation file (RFGM's XML is recognised by its content)."""
    if looks_like_xml(data):
        return _rows_from_rfgm_xml(data, where)
    if format == "rfgm-xml":
        raise GamepakError(f"{where}: not XML (RFGM's form starts with <root>)")
    text = _decode(data, where)
    if format == "json":
        return _rows_from_json(text, where)
    if format == "csv":
        return _rows_from_csv(text, where)
    if format == "po":
        return _rows_from_po(text, where)
    raise GamepakError(f"unknown translation format {format!r}")


@dataclass
class Applied:
    """What applying a translation changed."""

    changed: list[int] = field(default_factory=list)
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)


def apply_translation(table: LocaText, rows: Sequence[Row], *, delete: bool = False) -> Applied:
    """Put the rows' strings into `table`: changed strings replaced, new keys added (hash from
    the identifier), entries the rows lack removed only with `delete`. Everything is checked
    first: on an error `table` is unchanged."""
    index_of = table.index_of()
    seen: dict[int, Row] = {}
    plan: list[tuple[int, Row]] = []
    for row in rows:
        if row.hash is not None:
            value = row.hash
            if row.identifier is not None and identifier_hash(row.identifier) != value:
                actual = hash_key(identifier_hash(row.identifier))
                raise GamepakError(
                    f"{row.where}: identifier {row.identifier!r} hashes to {actual}, not the {hash_key(value)} given"
                )
        elif row.identifier is not None:
            value = identifier_hash(row.identifier)
        else:
            raise GamepakError(f"{row.where}: neither a hash nor an identifier")
        earlier = seen.get(value)
        if earlier is not None:
            name = row.identifier or earlier.identifier or hash_key(value)
            raise GamepakError(f"{row.where}: {name} ({hash_key(value)}) is also at {earlier.where}")
        seen[value] = row
        index = index_of.get(value)
        if index is not None and row.identifier is not None:
            known = table.entries[index].identifier
            if known is not None and known.lower() != row.identifier.lower():
                raise GamepakError(
                    f"{row.where}: identifier {row.identifier!r} hashes to {hash_key(value)}, the hash of "
                    f"{describe(index, value)}, named {known!r}: a collision"
                )
        plan.append((value, row))
    applied = Applied()
    updates: dict[int, bytes] = {}
    new_entries: list[LocaEntry] = []
    for value, row in plan:
        index = index_of.get(value)
        if index is None:
            text = row.text if row.text is not None else row.fallback
            if text is None:
                continue
            new_entries.append(LocaEntry(value, encode_text(text, row.where), row.identifier))
            applied.added.append(row.identifier or hash_key(value))
        elif row.text is not None and row.text != table.entries[index].text:
            updates[index] = encode_text(row.text, row.where)
    for index, raw in updates.items():
        table.entries[index].raw = raw
    for value, row in plan:
        index = index_of.get(value)
        if index is not None and row.identifier is not None and table.entries[index].identifier is None:
            table.entries[index].identifier = row.identifier
    applied.changed = sorted(updates)
    if delete:
        kept = [entry for entry in table.entries if entry.hash in seen]
        applied.removed = [entry.key for entry in table.entries if entry.hash not in seen]
        table.entries[:] = kept
    table.entries.extend(new_entries)
    return applied


# -- files and packs ---------------------------------------------------------------------------


@dataclass
class Located:
    """Where a localization file's strings are: `member` of the pack `file` (a nested path, or
    None for the file itself), and its parsed table."""

    file: str
    member: str | None
    table: LocaText
    format: str | None = None

    @property
    def label(self) -> str:
        return self.file if self.member is None else f"{self.file}/{self.member}"


def _read_head(path: str, size: int = 4) -> bytes:
    try:
        with open(path, "rb") as handle:
            return handle.read(size)
    except OSError as exc:
        raise GamepakError(f"{path}: cannot read: {exc.strerror}") from exc


def _read_all(path: str) -> bytes:
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError as exc:
        raise GamepakError(f"{path}: cannot read: {exc.strerror}") from exc


def locatext_members(archive: object, prefix: str = "") -> list[str]:
    """The `.rfglocatext` members of an open pack and of the packs inside it, as member paths."""
    from ....core.archive import Archive

    assert isinstance(archive, Archive)
    found = []
    for entry in archive.infolist():
        lowered = entry.name.lower()
        if lowered.endswith(EXTENSION):
            found.append(prefix + entry.name)
        elif lowered.endswith(PACK_EXTENSIONS):
            try:
                inner = archive.open_archive(entry)
            except GamepakError:
                continue
            with inner:
                found += locatext_members(inner, f"{prefix}{entry.name}/")
    return found


def is_locatext_target(file: str, member: str | None = None) -> bool:
    """Whether `gamepak text` should read FILE (or FILE's MEMBER) as an `.rfglocatext`: the file
    starts with its signature, MEMBER is named `.rfglocatext`, or FILE is an RFG pack holding
    one (J2ME packs are never RFG packs)."""
    if member is not None:
        return member.lower().endswith(EXTENSION)
    if not os.path.isfile(file):
        return False
    head = _read_head(file)
    if is_locatext(head):
        return True
    return head == b"\xce\x0a\x89\x51" and file.lower().endswith(PACK_EXTENSIONS)


def locate(file: str | os.PathLike[str], member: str | None = None, *, format: str | None = None) -> Located:
    """The `.rfglocatext` at `file`, or its `member` (a path through nested packs), or the one
    a pack `file` holds."""
    path = os.fspath(file)
    if member is None and format is None and is_locatext(_read_head(path)):
        return Located(path, None, LocaText.parse(_read_all(path), path))
    from ....core.nested import resolve
    from ....core.opening import open as open_archive

    with open_archive(path, format) as archive:
        if member is None:
            found = locatext_members(archive)
            if len(found) != 1:
                listed = ", ".join(found[:8]) + (f" and {len(found) - 8} more" if len(found) > 8 else "")
                what = f"{len(found)} localization files: {listed}; name the MEMBER" if found else "no .rfglocatext"
                raise GamepakError(f"{path}: a {archive.format_name} pack with {what}")
            member = found[0]
        try:
            inner, entry = resolve(archive, member)
        except MemberNotFoundError:
            raise GamepakError(f"{path}: no member {member!r}") from None
        data = inner.read(entry)
        label = f"{path}/{member}"
        return Located(path, member, LocaText.parse(data, label), archive.format_name)


def name_entries(located: Located, sources: Sequence[str] | None, name_lists: Sequence[str] = ()) -> int:
    """Give `located`'s entries the identifiers found in `sources` (None: the packs beside the
    file) and the name lists; returns how many entries are named."""
    from .names import default_sources, find_names

    chosen = default_sources(located.file) if sources is None else list(sources)
    wanted = {entry.hash for entry in located.table.entries}
    names = find_names(chosen, name_lists, wanted)
    return located.table.name(names.identifiers)


@dataclass
class LocaExport:
    """What `export_locatext` did."""

    located: Located
    data: bytes
    named: int


@dataclass
class LocaImport:
    """What `import_locatext` did."""

    located: Located
    applied: Applied


def export_locatext(
    file: str | os.PathLike[str],
    output: str | os.PathLike[str] | None = None,
    member: str | None = None,
    *,
    format: str | None = None,
    translation: str | None = None,
    names: Sequence[str] | None = None,
    name_lists: Sequence[str] = (),
    source: str | os.PathLike[str] | None = None,
    overwrite: bool = False,
) -> LocaExport:
    """Export the strings of an `.rfglocatext` (loose, or a pack's `member`) as a translation
    file, naming entries from the tables in `names` (None: the packs beside it) and the name
    lists; `source` is a reference language's file whose strings are shown beside them."""
    located = locate(file, member, format=format)
    named = name_entries(located, names, name_lists)
    sources = None
    if source is not None:
        sources = {entry.hash: entry.text for entry in locate(source).table.entries}
    encoded = dump_translation(
        located.table.entries,
        translation_format(output, translation),
        sources=sources,
        title=os.path.basename(located.label),
    )
    if output is not None:
        from ....core.atomic import write_bytes

        write_bytes(output, encoded, overwrite=overwrite)
    return LocaExport(located, encoded, named)


def import_locatext(
    file: str | os.PathLike[str],
    translation: str | os.PathLike[str],
    output: str | os.PathLike[str],
    member: str | None = None,
    *,
    format: str | None = None,
    translation_kind: str | None = None,
    names: Sequence[str] | None = None,
    name_lists: Sequence[str] = (),
    delete: bool = False,
    overwrite: bool = False,
) -> LocaImport:
    """Write `output`: `file` (or the pack `file` with its `member` rebuilt) holding the strings
    of `translation`. Checked whole before anything is written; inside a pack, the new pack
    appears whole or not at all."""
    where = os.fspath(translation)
    data = _read_all(where)
    kind = "rfgm-xml" if looks_like_xml(data) else translation_format(translation, translation_kind)
    rows = load_translation(data, kind, where)
    located = locate(file, member, format=format)
    # Identifiers named in the file guard against collisions; only needed when rows name some.
    if any(row.identifier is not None for row in rows) and (names is None or names or name_lists):
        name_entries(located, names, name_lists)
    applied = apply_translation(located.table, rows, delete=delete)
    rebuilt = located.table.to_bytes()
    if located.member is None:
        from ....core.atomic import write_bytes

        write_bytes(output, rebuilt, overwrite=overwrite)
    else:
        replace_member(
            located.file, located.member, rebuilt, os.fspath(output), format=located.format, overwrite=overwrite
        )
    return LocaImport(located, applied)


def replace_member(
    file: str, member: str, data: bytes, output: str, *, format: str | None = None, overwrite: bool = False
) -> None:
    """Write `output`: the pack `file` with `member` (a nested path) holding `data`. The copy is
    edited beside `output` under a temporary name and renamed into place; with `output` the
    pack itself, the pack is edited (crash-safe either way)."""
    from ....core.atomic import publish_temporary, remove_stale_temporaries, temporary_name
    from ....errors import OutputExistsError
    from ....ops.edit import edit

    if os.path.lexists(output):
        if not overwrite:
            raise OutputExistsError(output)
        if os.path.samefile(file, output):
            with edit(file, format) as editor:
                editor.replace(member, data)
            return
    folder, base = os.path.split(os.path.abspath(output))
    remove_stale_temporaries(folder)
    temporary = os.path.join(folder, temporary_name(base))
    import shutil

    try:
        shutil.copyfile(file, temporary)
        with edit(temporary, format) as editor:
            editor.replace(member, data)
        publish_temporary(temporary, output, overwrite)
    except BaseException:
        try:  # noqa: SIM105 - contextlib costs start-up time
            os.unlink(temporary)
        except FileNotFoundError:
            pass
        raise
