//! Any text compiled as fleet.kdl: fleetc must never panic, and every failure must be a
//! diagnostic with a place in the text.
#![no_main]

use fleetc::compile::{MapLoader, compile};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let c = compile("fleet.kdl", text, &MapLoader::default());
    for d in c.diags.iter() {
        let span = d.span.expect("every diagnostic has a place");
        assert!(span.end() <= text.len().max(1));
    }
    if c.diags.has_errors() {
        assert!(c.artifacts.is_none());
    }
});
