package main

import (
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"

	"github.com/switchboard-chat/switchboard/config"
)

// checkState says where the daemon keeps its files for this config: data_dir,
// the embedded PostgreSQL cluster (cluster, as the postgres check found it;
// "" when it did not start) and the exec workspaces, computed by the code
// serve uses. As root the last two may live outside data_dir (under
// /var/lib/switchboard and the temporary directory), so the line also says
// what to remove to remove them all.
func checkState(cfg *config.Config, cluster string) (string, error) {
	dataDir, err := filepath.Abs(cfg.DataDir)
	if err != nil {
		return "", fmt.Errorf("data_dir %q: %w", cfg.DataDir, err)
	}
	// placeExec's log line says that the workspaces moved; this line says
	// where, so it is not wanted twice.
	place, err := placeExec(cfg.DataDir, cfg.Exec.User, slog.New(slog.DiscardHandler))
	if err != nil {
		return "", fmt.Errorf("exec workspaces: %w (check exec.user and data_dir)", err)
	}
	parts := []string{"data_dir " + dataDir}
	remove := []string{dataDir}
	switch {
	case cfg.Database.URL != "":
		parts = append(parts, "database at database.url (none kept here)")
	case cluster == "":
		parts = append(parts, "PostgreSQL cluster unknown (the embedded server did not start: see the postgres line)")
	default:
		parts = append(parts, "PostgreSQL cluster "+cluster)
		if home := filepath.Dir(cluster); !within(home, dataDir) {
			remove = append(remove, home)
		}
	}
	parts = append(parts, "exec workspaces "+place.workspaces)
	if !within(place.workspaces, dataDir) {
		remove = append(remove, place.workspaces)
	}
	return strings.Join(parts, "; ") + "; to remove them, stop switchboard and run rm -rf " + strings.Join(remove, " "), nil
}

// within reports whether path is dir or inside it.
func within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
