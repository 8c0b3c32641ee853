package oci

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"slices"

	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/content/oci"
	"oras.land/oras-go/v2/registry/remote"
	"oras.land/oras-go/v2/registry/remote/auth"
	"oras.land/oras-go/v2/registry/remote/retry"

	"github.com/nriwasm/nriwasm/host/oci/ref"
)

// Remote says how registries are reached.
type Remote struct {
	// PlainHTTP lists the registries (host:port, as in references) reached
	// over plain HTTP instead of HTTPS.
	PlainHTTP []string
	// Credential resolves credentials per registry (see Credentials). Default:
	// anonymous.
	Credential auth.CredentialFunc
	// Client is the HTTP client. Default: oras-go's retrying client.
	Client *http.Client
}

// Open returns the store a reference names: a registry repository, or an
// OCI image layout directory (created when create is set, else it must
// exist).
func (o Remote) Open(ctx context.Context, r ref.Reference, create bool) (oras.GraphTarget, error) {
	if r.IsLayout() {
		if !create {
			if _, err := os.Stat(r.Layout); err != nil {
				return nil, fmt.Errorf("OCI layout %s: %w", r.Layout, err)
			}
		}
		s, err := oci.NewWithContext(ctx, r.Layout)
		if err != nil {
			return nil, fmt.Errorf("OCI layout %s: %w", r.Layout, err)
		}
		return s, nil
	}
	repo, err := remote.NewRepository(r.Name())
	if err != nil {
		return nil, fmt.Errorf("repository %s: %w", r.Name(), err)
	}
	repo.PlainHTTP = slices.Contains(o.PlainHTTP, r.Registry)
	client := o.Client
	if client == nil {
		client = retry.DefaultClient
	}
	header := http.Header{}
	header.Set("User-Agent", "nriwasm")
	repo.Client = &auth.Client{Client: client, Header: header, Cache: auth.NewCache(), Credential: o.Credential}
	return repo, nil
}
