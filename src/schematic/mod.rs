//! Talos Image Factory schematics: the factory's data structure, its canonical
//! (go-yaml v4) encoding, and the schematic ID (SHA-256 of that encoding).
