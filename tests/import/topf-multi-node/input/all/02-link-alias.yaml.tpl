apiVersion: v1alpha1
kind: LinkAliasConfig
name: uplink
selector:
  match: glob("{{ .Node.Data.mac | lower }}", mac(link.hardware_addr))
