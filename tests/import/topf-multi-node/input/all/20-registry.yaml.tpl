apiVersion: v1alpha1
kind: RegistryAuthConfig
name: registry.lab
username: lab
password: {{ "secret" | b64enc }}
