package oci

import (
	"context"
	"fmt"
	"os"

	"oras.land/oras-go/v2/registry/remote/auth"
	"oras.land/oras-go/v2/registry/remote/credentials"
)

// Environment variables read for registry credentials.
const (
	// EnvUsername and EnvPassword, when both set, are the credentials for the
	// registry a policy reference names; they take precedence over the docker
	// config file.
	EnvUsername = "NRIWASM_REGISTRY_USERNAME"
	EnvPassword = "NRIWASM_REGISTRY_PASSWORD"
	// EnvDockerConfig is docker's own: the directory holding config.json
	// (default ~/.docker).
	EnvDockerConfig = "DOCKER_CONFIG"
)

// Credentials resolves registry credentials, first from EnvUsername and
// EnvPassword (read with getenv), then from the docker config file,
// $DOCKER_CONFIG/config.json or ~/.docker/config.json in the process's
// environment: its "auths" entries, its credential helpers and its credential
// store, as `docker login` and `oras login` write them. A missing file (or no
// $HOME) means anonymous access; an unreadable one is an error.
func Credentials(getenv func(string) string) (auth.CredentialFunc, error) {
	user, pass := getenv(EnvUsername), getenv(EnvPassword)
	if (user == "") != (pass == "") {
		return nil, fmt.Errorf("registry credentials: set both %s and %s, or neither", EnvUsername, EnvPassword)
	}
	if os.Getenv(EnvDockerConfig) == "" {
		if _, err := os.UserHomeDir(); err != nil {
			// No $HOME (a bare service): no docker config to read.
			return envOnly(user, pass), nil
		}
	}
	store, err := credentials.NewStoreFromDocker(credentials.StoreOptions{})
	if err != nil {
		return nil, fmt.Errorf("registry credentials: docker config (%s): %w", EnvDockerConfig, err)
	}
	if user == "" {
		return credentials.Credential(store), nil
	}
	return envOnly(user, pass), nil
}

// envOnly answers the environment's credentials, or none.
func envOnly(user, pass string) auth.CredentialFunc {
	if user == "" {
		return nil
	}
	return func(context.Context, string) (auth.Credential, error) {
		return auth.Credential{Username: user, Password: pass}, nil
	}
}
