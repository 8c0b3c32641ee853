module github.com/nriwasm/nriwasm

go 1.26

require (
	github.com/go-logr/logr v1.4.4
	github.com/planetscale/vtprotobuf v0.6.0
	github.com/tetratelabs/wazero v1.12.0
	google.golang.org/protobuf v1.36.12
)

require golang.org/x/sys v0.44.0 // indirect
