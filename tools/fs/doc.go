// Package fs is the file tool family: read_file, write_file, edit,
// list_files, search and glob, confined to the session's workspace (the
// one exec runs in) through an os.Root, so no path or symlink leads out.
// Context files and memory documents are routed to the document store
// instead of the disk.
package fs
