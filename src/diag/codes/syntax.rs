//! The `fleet::syntax` codes: text that is not KDL v2. The parse error is raised in
//! `src/syntax/mod.rs`; the KDL v1 and unclosed-block recoveries, which name the likely cause
//! before the parser's own error, in `src/syntax/recover.rs`.

codes! {
    SYNTAX = "fleet::syntax::invalid-kdl", Error, None, None,
"## What it does
Reports text that is not valid KDL v2, the language fleet.kdl is written in.

## Why
Nothing can be understood from a file that does not parse; fleetc reports every syntax error
it can find before stopping.

## Example
    cluster \"main\" {
        endpoint address=10.10.0.10   // bare 10.10.0.10 is not a KDL value

## Instead
    cluster \"main\" {
        endpoint address=\"10.10.0.10\"
";

    KDL_V1 = "fleet::syntax::kdl-v1", Error, None,
    Some("fleet.kdl is KDL v2: write booleans `#true`/`#false`, null `#null`, and raw strings `#\"…\"#` (KDL v1's bare `true`, `false`, `null` and `r\"…\"` are not values in v2)"),
"## What it does
Reports a fleet.kdl that uses KDL v1 spellings: bare `true`, `false`, `null`, or raw strings
`r\"…\"` / `r#\"…\"#`. One diagnostic for the whole file, with every place marked.

## Why
fleet.kdl is KDL v2 (kdl.dev). In v2 keywords start with `#` and raw strings are `#\"…\"#`;
the v1 forms are not values at all, so the raw parser message (\"expected identifier string\")
says nothing useful.

## Example
    discovery false
    cni r\"cilium\"

## Instead
    discovery #false
    cni #\"cilium\"#   // or simply \"cilium\"
";

    UNCLOSED_BLOCK = "fleet::syntax::unclosed-block", Error, None, None,
"## What it does
Reports a `{` that is never closed, at the node that opened it: the innermost block whose
next line comes back to the block's own indentation without a `}`.

## Why
The parser only notices at the end of the file and blames the outermost block; the node that
lost its `}` is where the indentation says it is.

## Example
    pool \"workers\" count=2 {
        addresses \"192.168.1.61\" \"192.168.1.62\"
    sealed \"talos-secrets\"

## Instead
    pool \"workers\" count=2 {
        addresses \"192.168.1.61\" \"192.168.1.62\"
    }
    sealed \"talos-secrets\"
";
}
