// Package v1 holds the record's on-disk messages (Frame, Header, Exchange),
// generated from record.proto by `make generate` with the host's codec only:
// host/record reads and writes them; a record never reaches a guest.
package v1
