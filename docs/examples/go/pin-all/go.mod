module example.com/pin-all

go 1.26.0

require github.com/nriwasm/nriwasm v0.0.0

require (
	github.com/aperturerobotics/protobuf-go-lite v0.14.0 // indirect
	github.com/planetscale/vtprotobuf v0.6.1-0.20240319094008-0393e58bdf10 // indirect
	go.yaml.in/yaml/v2 v2.4.4 // indirect
	google.golang.org/protobuf v1.36.12 // indirect
	sigs.k8s.io/yaml v1.6.0 // indirect
)

// This example builds against the checkout it lives in; a policy of your own
// drops this line (go get github.com/nriwasm/nriwasm@latest).
replace github.com/nriwasm/nriwasm => ../../../..
