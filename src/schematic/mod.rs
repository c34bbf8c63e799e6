//! Talos Image Factory schematics (temporary stub, replaced by the full encoder).

use std::collections::BTreeMap;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Schematic {
    pub owner: Option<String>,
    pub overlay: Option<Overlay>,
    pub customization: Customization,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Overlay {
    pub image: String,
    pub name: String,
    pub options: BTreeMap<String, String>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Customization {
    pub embedded_machine_configuration: Option<String>,
    pub extra_kernel_args: Vec<String>,
    pub meta: Vec<Meta>,
    pub system_extensions: Vec<String>,
    pub bootloader: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Meta {
    pub key: u8,
    pub value: String,
}

#[derive(Debug, Clone)]
pub struct EncodeError {
    pub message: String,
}

impl std::fmt::Display for EncodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl Schematic {
    pub fn canonical_yaml(&self) -> Result<String, EncodeError> {
        let c = &self.customization;
        if c.system_extensions.is_empty() {
            return Ok("customization: {}\n".into());
        }
        let mut s = String::from("customization:\n    systemExtensions:\n        officialExtensions:\n");
        for e in &c.system_extensions {
            s.push_str(&format!("            - {e}\n"));
        }
        Ok(s)
    }
    pub fn id(&self) -> Result<String, EncodeError> {
        use sha2::Digest;
        let bytes = self.canonical_yaml()?;
        Ok(sha2::Sha256::digest(bytes.as_bytes()).iter().map(|b| format!("{b:02x}")).collect())
    }
    pub fn normalized(&self) -> Schematic {
        let mut s = self.clone();
        s.customization.system_extensions.sort();
        s.customization.system_extensions.dedup();
        s
    }
}

#[derive(Debug, Clone)]
pub struct ParseError {
    pub message: String,
}

impl std::fmt::Display for ParseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

pub fn parse(_text: &str) -> Result<Schematic, ParseError> {
    Err(ParseError { message: "not yet".into() })
}
