"""A table's schema: the fields its `<TableDescription>` names, or fields inferred from its rows.

<TableDescription>
  <Name>Weapon</Name>                       the tag of the table's rows
  <Type>TableDescription</Type>
  <Element>                                 one field; nested Elements are its sub-fields
    <Name>..</Name> <Type>KIND</Type>
    <Description>..</Description> <Display_Name>..</Display_Name> <Default>..</Default>
    <Required>true</Required> <Unique>true</Unique> <MinValue>0</MinValue> <MaxValue>9</MaxValue>
    KIND Selection:  <Choice>a</Choice>...          the values allowed
    KIND Flags:      <Flag>a</Flag>...              data: <field><Flag>a</Flag>...</field>
    KIND Reference:  <Reference><File>t.xtbl</File><Type>Row.Field[.Sub]</Type></Reference>
    KIND Filename:   <Extension>animx</Extension>   data: <field><Filename>x.animx</Filename>
                                                          [<Preload>..</Preload>]</field>
    KIND List, Grid: <Element> the item             data: repeated items
    KIND Element:    <Element>... the sub-fields    data: one child per sub-field
    KIND ComboElement: <Element>... the choices     data: one of them
    KIND Vector, Color: <X>/<Y>/<Z>, <R>/<G>/<B> (each a Name and a Type)
  </Element>
</TableDescription>
"""

from __future__ import annotations

from .xmldoc import is_element_name

TYPE_CHECKING = False
if TYPE_CHECKING:
    from xml.etree.ElementTree import Element as EtElement

# Kinds whose value is the element's own text.
LEAF_KINDS = frozenset({"Int", "Float", "String", "Selection", "Reference", "Bool"})
# Kinds whose element holds repeated items: a spreadsheet cell holds them as JSON text.
REPEATED_KINDS = frozenset({"List", "Grid", "Flags"})
# Kinds whose element holds one child per sub-field: dotted columns (`Damage.Min`).
STRUCT_KINDS = frozenset({"Element", "Vector", "Color", "Filename", "ComboElement"})
KNOWN_KINDS = LEAF_KINDS | REPEATED_KINDS | STRUCT_KINDS
# Editor bookkeeping every table's rows may hold; never reported as unknown.
EDITOR_FIELDS = frozenset({"_Editor"})
_COMPONENTS = ("X", "Y", "Z", "R", "G", "B")


class Field:
    """One field of a table: its name, kind and what the schema says about its values."""

    __slots__ = (
        "by_name",
        "children",
        "choices",
        "default",
        "description",
        "display_name",
        "extension",
        "flags",
        "inferred",
        "kind",
        "maximum",
        "minimum",
        "name",
        "reference",
        "required",
        "unique",
    )

    def __init__(self, name: str, kind: str, *, inferred: bool = False) -> None:
        self.name = name
        self.kind = kind
        self.inferred = inferred
        self.description = ""
        self.display_name = ""
        self.default: str | None = None
        self.required: bool | None = None
        self.unique = False
        self.minimum: str | None = None
        self.maximum: str | None = None
        self.choices: list[str] = []
        self.flags: list[str] = []
        self.reference: tuple[str, list[str]] | None = None  # (file, [row tag, field path...])
        self.extension: str | None = None
        self.children: list[Field] = []
        self.by_name: dict[str, Field] = {}

    @property
    def item_tag(self) -> str | None:
        """The tag of a repeated field's items (`Flag` for Flags), None when not known."""
        if self.kind == "Flags":
            return "Flag"
        if self.kind in ("List", "Grid") and self.children:
            return self.children[0].name
        return None

    def child(self, name: str) -> Field | None:
        return self.by_name.get(name)

    def to_dict(self) -> dict[str, object]:
        """The field as JSON: name, kind and what the schema says (empty parts left out)."""
        document: dict[str, object] = {"name": self.name, "kind": self.kind}
        for key in ("description", "display_name", "default", "extension", "minimum", "maximum"):
            value = getattr(self, key)
            if value:
                document[key] = value
        if self.unique:
            document["unique"] = True
        if self.choices:
            document["choices"] = self.choices
        if self.flags:
            document["flags"] = self.flags
        if self.reference:
            document["reference"] = {"file": self.reference[0], "field": ".".join(self.reference[1])}
        if self.children:
            document["fields"] = [child.to_dict() for child in self.children]
        if self.inferred:
            document["inferred"] = True
        return document

    def _add(self, child: Field) -> None:
        # The first of two sub-fields of one name: a second would be a second column of that name.
        if child.name not in self.by_name:
            self.children.append(child)
            self.by_name[child.name] = child


class Schema:
    """A table's fields: from its `<TableDescription>` (`described`), else inferred from its rows."""

    def __init__(self, row_tag: str, fields: list[Field], *, described: bool) -> None:
        self.row_tag = row_tag
        self.by_name: dict[str, Field] = {}
        for field in fields:
            self.by_name.setdefault(field.name, field)  # the first of two of one name, as sub-fields
        # Without the later namesakes: each is a column, and a column name may not repeat.
        self.fields = [field for field in fields if self.by_name[field.name] is field]
        self.described = described

    def field(self, path: str) -> Field | None:
        """The field a dotted path names (`Damage_Scaling_Max.NPC_Damage`), or None."""
        parts = path.split(".")
        field = self.by_name.get(parts[0])
        for part in parts[1:]:
            if field is None:
                return None
            field = field.by_name.get(part)
        return field

    def to_dict(self) -> dict[str, object]:
        return {"row": self.row_tag, "described": self.described, "fields": [f.to_dict() for f in self.fields]}


def _text(element: EtElement, tag: str) -> str | None:
    found = element.find(tag)
    return None if found is None else (found.text or "").strip()


def parse_field(element: EtElement, depth: int = 0) -> Field:
    """A `<TableDescription>`'s `<Element>` (or a Vector's `<X>`) as a Field."""
    name = _text(element, "Name") or element.tag
    kind = _text(element, "Type") or "String"
    field = Field(name, kind)
    for child in element:
        tag = child.tag
        text = (child.text or "").strip()
        if tag == "Description":
            field.description = text
        elif tag == "Display_Name":
            field.display_name = text
        elif tag == "Default":
            field.default = text
        elif tag == "Required":
            field.required = text.lower() == "true"
        elif tag == "Unique":
            field.unique = text.lower() == "true"
        elif tag == "MinValue":
            field.minimum = text
        elif tag == "MaxValue":
            field.maximum = text
        elif tag == "Choice":
            field.choices.append(text)
        elif tag == "Flag":
            field.flags.append(text)
        elif tag == "Extension":
            field.extension = text.lstrip(".")
        elif tag == "Reference":
            file = _text(child, "File") or ""
            target = _text(child, "Type") or ""
            field.reference = (file, [part for part in target.split(".") if part])
        elif (tag == "Element" or (tag in _COMPONENTS and kind in ("Vector", "Color"))) and depth < 64:
            sub = parse_field(child, depth + 1)
            if is_element_name(sub.name):  # else no element can be the field (see parse_schema)
                field._add(sub)
    if kind == "Filename" and not field.children:
        path = Field("Filename", "String")
        path.extension = field.extension
        field._add(path)
        field._add(Field("Preload", "String"))
    return field


def parse_schema(description: EtElement) -> Schema:
    """The Schema a `<TableDescription>` declares."""
    row_tag = _text(description, "Name") or ""
    fields = [parse_field(child) for child in description if child.tag == "Element"]
    # A field named what no element can be named (`Item>2`, a tab inside) describes nothing a
    # row can hold; as a column it would be written as broken XML and break the CSV header.
    return Schema(row_tag, [field for field in fields if is_element_name(field.name)], described=True)
