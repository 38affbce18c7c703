package fs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"

	"github.com/switchboard-chat/switchboard/tools"
)

// Files opens workspace files for tools of other packages (the media
// tools read_image, send_file…) through the same jail as the fs tools:
// only the caller's own workspace, deny_paths honoured, and no "..",
// absolute path or symbolic link leading out.
type Files struct{ j *jail }

// NewFiles returns Files confined like the fs tools built from o; only
// Workspaces and DenyPaths count.
func NewFiles(o Options) *Files {
	if o.DenyPaths == nil {
		o.DenyPaths = DefaultDenyPaths
	}
	return &Files{&jail{opts: Options{Workspaces: o.Workspaces, DenyPaths: o.DenyPaths}}}
}

// Open opens the regular file p of the call's workspace for reading; the
// caller closes it. The error is the message for the model. It never
// blocks on a FIFO or device planted in the workspace: the file is opened
// non-blocking and refused unless it is a regular file.
func (f *Files) Open(call tools.Call, p string) (*os.File, fs.FileInfo, error) {
	root, rel, err := f.j.openPath(call, p)
	if err != nil {
		return nil, nil, err
	}
	defer root.Close() // the opened file outlives the root
	file, err := root.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, errors.New(friendly(p, err))
	}
	info, err := file.Stat()
	switch {
	case err != nil:
		file.Close()
		return nil, nil, errors.New(friendly(p, err))
	case info.IsDir():
		file.Close()
		return nil, nil, fmt.Errorf("%s %v", p, errIsDir)
	case !info.Mode().IsRegular():
		file.Close()
		return nil, nil, fmt.Errorf("%s %v", p, errNotRegular)
	}
	return file, info, nil
}
