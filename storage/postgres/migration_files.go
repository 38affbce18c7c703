package postgres

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"strconv"
	"strings"

	"github.com/pressly/goose/v3"
)

// The migrations are goose SQL files (migrations/NNNNN_name.sql, with
// "-- +goose Up" and "-- +goose Down" sections), so the goose command line
// can still run them by hand. The daemon hands them to goose as Go
// migrations read here instead of as SQL files: goose's SQL parser takes a
// 4 MiB scan buffer per section and per statement it checks: 16 MiB for
// this set, where the rest of a start allocates 3. A start that migrated
// grew its heap to 20 MiB, took 14 ms more CPU on a slow guest and had 0.5
// MiB more private memory right after (docs/benchmarks.md, twenty-sixth
// round). goose still does everything
// else: the version table, ordering, the advisory lock and transactions.
//
// What this reader supports is what the files use: an Up section run as one
// multi-statement command inside goose's transaction (PostgreSQL splits the
// statements, dollar-quoted bodies included, so StatementBegin/End are just
// comments to it), and "NO TRANSACTION" files, whose Up section is run one
// statement at a time outside a transaction (CREATE INDEX CONCURRENTLY);
// there every statement must end with ";" at the end of a line, and
// StatementBegin or dollar quotes are refused. Any other annotation is an
// error, so a file that needs more of goose fails in the tests, not in
// production.

// migrationFile is one migration: its version and the Up section.
type migrationFile struct {
	name    string
	version int64
	// up is the Up section's text (noTx false) and statements its
	// statements (noTx true).
	up         string
	statements []string
	noTx       bool
}

// migrationVersions returns the version of every migration in files, in
// file name order.
func migrationVersions(files fs.FS) ([]int64, error) {
	listed, err := listMigrations(files)
	if err != nil {
		return nil, err
	}
	versions := make([]int64, len(listed))
	for i, m := range listed {
		versions[i] = m.version
	}
	return versions, nil
}

// listMigrations names every migration in files (NNNNN_name.sql), with
// its version, in file name order; it does not read them.
func listMigrations(files fs.FS) ([]migrationFile, error) {
	entries, err := fs.ReadDir(files, ".")
	if err != nil {
		return nil, err
	}
	var out []migrationFile
	for _, e := range entries {
		name := e.Name()
		num, _, found := strings.Cut(name, "_")
		if !found || !strings.HasSuffix(name, ".sql") {
			continue
		}
		v, err := strconv.ParseInt(num, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("migration %s: the name must start with its version number: %w", name, err)
		}
		out = append(out, migrationFile{name: name, version: v})
	}
	return out, nil
}

// readMigrations reads and splits every migration in files.
func readMigrations(files fs.FS) ([]migrationFile, error) {
	listed, err := listMigrations(files)
	if err != nil {
		return nil, err
	}
	for i, l := range listed {
		text, err := fs.ReadFile(files, l.name)
		if err != nil {
			return nil, err
		}
		m, err := parseMigration(l.name, string(text))
		if err != nil {
			return nil, err
		}
		m.version = l.version
		listed[i] = m
	}
	return listed, nil
}

// parseMigration splits one file's text into what goose runs going up.
func parseMigration(name, text string) (migrationFile, error) {
	m := migrationFile{name: name}
	var up strings.Builder
	section := ""
	for line := range strings.Lines(text) {
		trimmed := strings.TrimSpace(line)
		annotation, isAnnotation := strings.CutPrefix(trimmed, "-- +goose ")
		if !isAnnotation {
			if section == "up" {
				up.WriteString(line)
			}
			continue
		}
		switch strings.TrimSpace(annotation) {
		case "Up":
			if section != "" {
				return m, fmt.Errorf("migration %s: a second Up section, or Up after Down", name)
			}
			section = "up"
		case "Down":
			if section != "up" {
				return m, fmt.Errorf("migration %s: Down before Up", name)
			}
			section = "down"
		case "NO TRANSACTION":
			m.noTx = true
		case "StatementBegin", "StatementEnd":
			// A comment to PostgreSQL, which splits the statements itself.
		default:
			return m, fmt.Errorf("migration %s: goose annotation %q is not supported here (storage/postgres/migration_files.go)", name, trimmed)
		}
	}
	if section == "" {
		return m, fmt.Errorf("migration %s: no \"-- +goose Up\" line", name)
	}
	m.up = up.String()
	if strings.TrimSpace(stripComments(m.up)) == "" {
		return m, fmt.Errorf("migration %s: the Up section has no statement", name)
	}
	if !m.noTx {
		return m, nil
	}
	if strings.Contains(text, "+goose StatementBegin") || strings.Contains(stripComments(m.up), "$") {
		return m, fmt.Errorf("migration %s: NO TRANSACTION migrations are split at \";\" line ends here: no StatementBegin blocks or dollar quotes", name)
	}
	stmts, err := splitStatements(m.up)
	if err != nil {
		return m, fmt.Errorf("migration %s: %w", name, err)
	}
	m.statements = stmts
	return m, nil
}

// splitStatements splits SQL whose statements each end with ";" at the end
// of a line; comment lines go with the statement they precede.
func splitStatements(sqlText string) ([]string, error) {
	var stmts []string
	var cur strings.Builder
	for line := range strings.Lines(sqlText) {
		cur.WriteString(line)
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "--") || !strings.HasSuffix(trimmed, ";") {
			continue
		}
		stmts = append(stmts, strings.TrimSpace(cur.String()))
		cur.Reset()
	}
	if strings.TrimSpace(stripComments(cur.String())) != "" {
		return nil, fmt.Errorf("a statement does not end with \";\" at the end of a line: %q", strings.TrimSpace(cur.String()))
	}
	return stmts, nil
}

// stripComments drops the lines that hold only a "--" comment.
func stripComments(sqlText string) string {
	var b strings.Builder
	for line := range strings.Lines(sqlText) {
		if !strings.HasPrefix(strings.TrimSpace(line), "--") {
			b.WriteString(line)
		}
	}
	return b.String()
}

// gooseMigration is m as a goose Go migration that only goes up.
func (m migrationFile) gooseMigration() *goose.Migration {
	var up *goose.GoFunc
	if m.noTx {
		stmts := m.statements
		up = &goose.GoFunc{RunDB: func(ctx context.Context, db *sql.DB) error {
			for i, s := range stmts {
				if _, err := db.ExecContext(ctx, s); err != nil {
					first, _, _ := strings.Cut(strings.TrimSpace(stripComments(s)), "\n")
					return fmt.Errorf("statement %d (%s): %w", i+1, first, err)
				}
			}
			return nil
		}}
	} else {
		text := m.up
		// Without arguments pgx sends the text in one simple-protocol
		// query, so every statement in it runs, inside goose's transaction.
		up = &goose.GoFunc{RunTx: func(ctx context.Context, tx *sql.Tx) error {
			_, err := tx.ExecContext(ctx, text)
			return err
		}}
	}
	return goose.NewGoMigration(m.version, up, nil)
}
