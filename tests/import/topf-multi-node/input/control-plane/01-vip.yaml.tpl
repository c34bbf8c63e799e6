{{- if eq .Node.Role "control-plane" }}
apiVersion: v1alpha1
kind: Layer2VIPConfig
name: "10.20.0.10"
link: bond0
{{- end }}
