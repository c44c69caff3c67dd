"""The content registry's rows, one module per family (each with its `Family` and its
`ContentKind` rows); `gamepak.content` orders them into `FAMILIES` and `KINDS` and holds the
lookups. Importing these imports none of the modules the rows name."""
