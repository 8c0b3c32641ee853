package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// runnableBlock is a fenced block whose info string is "sh runnable": each
// command in it is a `go run ./host/cmd/nriwasm …` line (a trailing "\"
// continues it) that TestDocCommandsRun runs.
var runnableBlock = regexp.MustCompile("(?s)```sh runnable\n(.*?)```")

// docCommands returns the commands of every runnable block in the repository's
// Markdown files, by file.
func docCommands(t *testing.T, root string) map[string][]string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(root, "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, pattern := range []string{"docs/*.md", "policies/*/README.md", "sdk/*/README.md", "charts/*/README.md"} {
		more, err := filepath.Glob(filepath.Join(root, pattern))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, more...)
	}
	out := map[string][]string{}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, file)
		for _, m := range runnableBlock.FindAllStringSubmatch(string(data), -1) {
			text := strings.ReplaceAll(m[1], "\\\n", " ")
			for _, line := range strings.Split(text, "\n") {
				if line = strings.TrimSpace(line); line != "" {
					out[rel] = append(out[rel], line)
				}
			}
		}
	}
	return out
}

// TestDocCommandsRun runs every command the docs mark runnable (README.md's
// main job among them) as written, from the repository's root, in-process:
// each must succeed. A runnable block may hold nothing but nriwasm commands.
func TestDocCommandsRun(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	commands := docCommands(t, root)
	if len(commands["README.md"]) == 0 {
		t.Fatal("README.md marks no command runnable (```sh runnable)")
	}
	t.Chdir(root)
	const prefix = "go run ./host/cmd/nriwasm "
	for file, lines := range commands {
		for _, line := range lines {
			args, ok := strings.CutPrefix(line, prefix)
			if !ok {
				t.Errorf("%s: runnable block holds %q, not a `%s…` command", file, line, prefix)
				continue
			}
			argv := strings.Fields(args)
			if argv[0] == "simulate" || argv[0] == "check" {
				argv = append(argv, "--cache-dir", cacheDir)
			}
			out, errOut, code := run(t, argv...)
			if code != 0 || out == "" {
				t.Errorf("%s: `%s` exited %d with %d bytes of output: %s", file, line, code, len(out), errOut)
			}
		}
	}
}
