package fs

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/switchboard-chat/switchboard/tools"
	"github.com/switchboard-chat/switchboard/tools/exec"
)

// DefaultDenyPaths are the workspace paths the fs tools hide unless
// tools.fs.deny_paths says otherwise.
var DefaultDenyPaths = []string{".git", ".ssh", ".env"}

// fs tool limits.
const (
	maxReadBytes   = 10 << 20  // a file read_file or edit loads at most
	maxShownBytes  = 128 << 10 // text read_file returns at most
	maxWriteBytes  = 1 << 20   // content write_file and edit write at most
	maxListEntries = 1000      // entries list_files and glob return at most
	binarySniff    = 8000      // bytes looked at to tell binary files
)

// Options configures the fs tools (read_file, write_file, edit,
// list_files, search, glob): they work in the session's workspace, the
// same directory exec runs in.
type Options struct {
	Workspaces exec.Workspaces
	// DenyPaths are hidden and refused: names (".git" anywhere) or
	// workspace-relative paths ("secrets/prod"). Nil means DefaultDenyPaths.
	DenyPaths []string
	// Docs, when set, keeps the context files (ContextFiles) and memory
	// documents (MEMORY.md, memory/*.md): read_file, write_file and edit
	// route those paths there instead of the disk.
	Docs tools.DocStore
	// AgentKind returns an agent's kind (KindPredefined or KindOpen); nil
	// means predefined for every agent.
	AgentKind func(agent string) string
	// Embedder, when set (and Docs is a VectorStore), embeds every memory
	// document written, for memory_search by meaning.
	Embedder tools.Embedder
}

// NewTools returns the six fs tools.
func NewTools(o Options) []tools.Tool {
	if o.DenyPaths == nil {
		o.DenyPaths = DefaultDenyPaths
	}
	j := &jail{opts: o}
	return []tools.Tool{&ReadFile{j}, &WriteFile{j}, &Edit{j}, &ListFiles{j}, &Search{j}, &Glob{j}}
}

// jail resolves tool paths inside a session's workspace. Every file access
// goes through an os.Root opened on the workspace, which resolves each path
// component itself (openat-style): a symlink or ".." that leads out is
// refused at the moment of access, so swapping a symlink after a check
// cannot lead out either.
type jail struct{ opts Options }

// open returns the workspace of the call's session as an os.Root.
func (j *jail) open(call tools.Call) (*os.Root, error) {
	if call.Session == "" {
		return nil, errors.New("this call has no session; workspace tools run only inside a conversation")
	}
	ws, err := j.opts.Workspaces.For(call)
	if err != nil {
		return nil, err
	}
	return os.OpenRoot(ws)
}

// docRoute reports whether the path argument p names a document the
// database keeps for the call's agent, and where: the key to write and
// the scopes to read, in order.
func (j *jail) docRoute(call tools.Call, p string) (key tools.DocKey, read []string, ok bool) {
	if j.opts.Docs == nil || filepath.IsAbs(p) {
		return tools.DocKey{}, nil, false
	}
	c := strings.TrimPrefix(filepath.ToSlash(filepath.Clean(p)), "./")
	if !tools.IsContextFile(c) && !tools.IsMemoryPath(c) {
		return tools.DocKey{}, nil, false
	}
	kind := tools.KindPredefined
	if j.opts.AgentKind != nil {
		kind = j.opts.AgentKind(call.Agent)
	}
	write, read := tools.DocScopes(kind, call, c)
	return tools.DocKey{Agent: call.Agent, Scope: write, Path: c}, read, true
}

// getDoc reads the routed document from the first scope that has it.
func (j *jail) getDoc(ctx context.Context, key tools.DocKey, read []string) (string, error) {
	for _, scope := range read {
		k := key
		k.Scope = scope
		text, err := j.opts.Docs.GetDoc(ctx, k)
		if errors.Is(err, tools.ErrNoDoc) {
			continue
		}
		return text, err
	}
	return "", tools.ErrNoDoc
}

// maxEmbedText bounds the text of one document sent to the embedder.
const maxEmbedText = 8000

// putDoc stores a routed document and, for a memory document with an
// embedder configured, its vector. An embedding failure keeps the
// document (full-text search still finds it) and says so.
func (j *jail) putDoc(ctx context.Context, key tools.DocKey, content string) (note string, err error) {
	if err := j.opts.Docs.PutDoc(ctx, key, content); err != nil {
		return "", fmt.Errorf("could not save %s right now (storage unavailable); try again later", key.Path)
	}
	vs, ok := j.opts.Docs.(tools.VectorStore)
	if !ok || j.opts.Embedder == nil || content == "" || !tools.IsMemoryPath(key.Path) {
		return "", nil
	}
	text := content
	if len(text) > maxEmbedText {
		text = text[:maxEmbedText]
	}
	vecs, err := j.opts.Embedder.Embed(ctx, []string{text})
	if err == nil {
		err = vs.SetDocVector(ctx, key, vecs[0])
	}
	if err != nil {
		return " (not indexed by meaning: the embeddings model is unavailable; word search still finds it)", nil
	}
	return "", nil
}

// docText reads a routed document for a tool; the error is the message
// for the model.
func (j *jail) docText(ctx context.Context, key tools.DocKey, read []string) (string, error) {
	text, err := j.getDoc(ctx, key, read)
	switch {
	case errors.Is(err, tools.ErrNoDoc):
		return "", fmt.Errorf("%s does not exist yet; write_file creates it", key.Path)
	case err != nil:
		return "", fmt.Errorf("could not read %s right now (storage unavailable); try again later", key.Path)
	}
	return text, nil
}

// openPath opens the call's workspace and resolves the path argument p in
// it; the caller closes the root. The error is the message for the model.
func (j *jail) openPath(call tools.Call, p string) (*os.Root, string, error) {
	root, err := j.open(call)
	if err != nil {
		return nil, "", err
	}
	rel, err := j.rel(root, p)
	if err != nil {
		root.Close()
		return nil, "", err
	}
	return root, rel, nil
}

// readText reads the text file rel (named name in messages), at most limit
// bytes, refusing directories, special and binary files; the error is the
// message for the model.
func readText(root *os.Root, rel, name string, limit int64) (string, fs.FileInfo, error) {
	data, info, err := readLimited(root, rel, limit)
	switch {
	case errors.Is(err, errIsDir), errors.Is(err, errNotRegular), errors.Is(err, errTooLarge):
		return "", nil, fmt.Errorf("%s %v", name, err)
	case err != nil:
		return "", nil, errors.New(friendly(name, err))
	}
	if isBinary(data) {
		return "", nil, fmt.Errorf("%s is a binary file (%d bytes); the file tools handle text only", name, len(data))
	}
	return string(data), info, nil
}

// errOutside is returned for paths that lead out of the workspace.
var errOutside = errors.New("outside the workspace")

// rel turns the path argument p into a clean path relative to the
// workspace root (name, for messages). Absolute paths must point inside
// the workspace; "." is the workspace itself.
func (j *jail) rel(root *os.Root, p string) (string, error) {
	if strings.IndexByte(p, 0) >= 0 || !utf8.ValidString(p) {
		return "", fmt.Errorf("%q is not a valid path", p)
	}
	if p == "" {
		p = "."
	}
	if filepath.IsAbs(p) {
		r, err := filepath.Rel(root.Name(), filepath.Clean(p))
		if err != nil {
			return "", fmt.Errorf("%q is %w; use a path relative to it", p, errOutside)
		}
		p = r
	}
	c := filepath.ToSlash(filepath.Clean(p))
	if c == ".." || strings.HasPrefix(c, "../") {
		return "", fmt.Errorf("%q is %w; use a path relative to it", p, errOutside)
	}
	if j.denied(c) {
		return "", fmt.Errorf("%q is not accessible (tools.fs.deny_paths)", p)
	}
	// A symlink inside the workspace may lead into a denied path: judge
	// where it leads too. (Leading out is refused by os.Root on access.)
	if real, err := resolveLinks(root, c); err != nil {
		return "", fmt.Errorf("%q: %w", p, err)
	} else if j.denied(real) {
		return "", fmt.Errorf("%q leads to a path that is not accessible (tools.fs.deny_paths)", p)
	}
	return c, nil
}

// maxLinkHops bounds symlink resolution.
const maxLinkHops = 40

// resolveLinks follows the symlinks of the clean relative path c inside
// root, component by component, and returns where it leads (relative to
// root). Components that do not exist yet are kept as written.
func resolveLinks(root *os.Root, c string) (string, error) {
	if c == "." {
		return c, nil
	}
	todo := strings.Split(c, "/")
	done := "."
	for hops := 0; len(todo) > 0; {
		next := path.Join(done, todo[0])
		todo = todo[1:]
		info, err := root.Lstat(next)
		if err != nil || info.Mode()&fs.ModeSymlink == 0 {
			done = next
			continue
		}
		if hops++; hops > maxLinkHops {
			return "", errors.New("too many levels of symbolic links")
		}
		target, err := root.Readlink(next)
		if err != nil {
			return "", err
		}
		if filepath.IsAbs(target) {
			r, err := filepath.Rel(root.Name(), filepath.Clean(target))
			if err != nil || r == ".." || strings.HasPrefix(r, "../") {
				return "", errOutside
			}
			done, target = ".", filepath.ToSlash(r)
		}
		joined := path.Join(done, target)
		if joined == ".." || strings.HasPrefix(joined, "../") {
			return "", errOutside
		}
		done = "."
		todo = append(strings.Split(joined, "/"), todo...)
	}
	return done, nil
}

// denied reports whether the clean relative path c is, or is inside, a
// denied path.
func (j *jail) denied(c string) bool {
	for _, d := range j.opts.DenyPaths {
		d = strings.Trim(filepath.ToSlash(filepath.Clean(d)), "/")
		if d == "" || d == "." {
			continue
		}
		if strings.Contains(d, "/") {
			if c == d || strings.HasPrefix(c, d+"/") {
				return true
			}
			continue
		}
		for _, part := range strings.Split(c, "/") {
			if part == d {
				return true
			}
		}
	}
	return false
}

// chown gives a path written by the daemon to the workspace owner, so
// exec (running as that user) can change it later.
func (j *jail) chown(root *os.Root, rel string) {
	u := j.opts.Workspaces.RunAs
	if u == nil {
		return
	}
	for p := rel; p != "." && p != "/" && p != ""; p = path.Dir(p) {
		_ = root.Lchown(p, int(u.UID), int(u.GID))
	}
}

// friendly turns a file system error into what the model should read.
func friendly(p string, err error) string {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Sprintf("%s does not exist in the workspace; use list_files or glob to see what is there", p)
	case strings.Contains(err.Error(), "escapes from parent"), errors.Is(err, errOutside):
		return fmt.Sprintf("%s is outside the workspace (a symlink or .. leads out); use a path inside it", p)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Sprintf("%s: permission denied", p)
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Sprintf("%s: %v", p, pe.Err)
	}
	return err.Error()
}

// isBinary reports whether data looks like a binary file.
func isBinary(data []byte) bool {
	sample := data[:min(len(data), binarySniff)]
	if bytes.IndexByte(sample, 0) >= 0 {
		return true
	}
	// A multi-byte rune cut at the end of the sample is not a sign.
	for i := 0; i < 3 && len(sample) > 0 && !utf8.Valid(sample); i++ {
		sample = sample[:len(sample)-1]
	}
	return !utf8.Valid(sample)
}

// fsArgs decodes a tool's arguments, naming the expected shape on error.
func fsArgs(raw json.RawMessage, v any, shape string) error {
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("invalid arguments: pass %s", shape)
	}
	return nil
}

// readLimited reads a regular file of at most limit bytes.
func readLimited(root *os.Root, rel string, limit int64) ([]byte, fs.FileInfo, error) {
	f, err := root.Open(rel)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	if info.IsDir() {
		return nil, info, errIsDir
	}
	if !info.Mode().IsRegular() {
		return nil, info, errNotRegular
	}
	if info.Size() > limit {
		return nil, info, fmt.Errorf("%w (%d bytes; the limit is %d)", errTooLarge, info.Size(), limit)
	}
	data := make([]byte, 0, info.Size())
	buf := bytes.NewBuffer(data)
	if _, err := buf.ReadFrom(f); err != nil {
		return nil, info, err
	}
	return buf.Bytes(), info, nil
}

var (
	errIsDir      = errors.New("is a directory; use list_files")
	errNotRegular = errors.New("is not a regular file")
	errTooLarge   = errors.New("is too large")
)
