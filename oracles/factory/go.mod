module fleetc.local/oracles/factory

go 1.26.5

require (
	github.com/siderolabs/image-factory v1.4.0
	github.com/siderolabs/talos/pkg/machinery v1.14.0-alpha.1
	go.yaml.in/yaml/v4 v4.0.0-rc.6
)

require github.com/siderolabs/gen v0.8.7 // indirect
