// Package embedded runs a private PostgreSQL server under the data
// directory for a zero-setup install (no database.url): it finds the
// machine's server binaries, initialises the cluster on first use with a
// password only switchboard knows, starts the server or reuses one another
// switchboard process runs on the same directory, and watches it, starting
// it again when it dies. Start returns the server's URL for the SQL store.
package embedded
