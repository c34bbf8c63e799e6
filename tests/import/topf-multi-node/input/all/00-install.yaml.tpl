machine:
  install:
    diskSelector:
      serial: "{{ .Node.Data.serial }}"
    wipe: false
