module github.com/nriwasm/nriwasm

go 1.26

require github.com/tetratelabs/wazero v1.12.0

require (
	github.com/planetscale/vtprotobuf v0.6.0 // indirect
	golang.org/x/sys v0.44.0 // indirect
	google.golang.org/protobuf v1.36.12 // indirect
)
