apiVersion: v1alpha1
kind: BondConfig
name: bond0
links:
  - uplink
bondMode: active-backup
mtu: 1500
addresses:
  - address: "{{ .Node.IP }}/24"
routes:
  - gateway: "{{ .Data.gateway }}"
