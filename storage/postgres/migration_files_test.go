package postgres

import (
	"io/fs"
	"strings"
	"testing"
)

func TestEmbeddedMigrationsRead(t *testing.T) {
	files, err := fs.Sub(migrationFiles, "migrations")
	if err != nil {
		t.Fatal(err)
	}
	ms, err := readMigrations(files)
	if err != nil {
		t.Fatal(err)
	}
	versions, err := migrationVersions(files)
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) < 20 || len(ms) != len(versions) {
		t.Fatalf("read %d migrations, %d versions; want the same count, at least 20", len(ms), len(versions))
	}
	for i, m := range ms {
		if m.version != int64(i+1) || versions[i] != m.version {
			t.Errorf("%s: version %d (listed %d), want %d", m.name, m.version, versions[i], i+1)
		}
		if strings.Contains(m.up, "+goose") {
			t.Errorf("%s: the Up text keeps an annotation line:\n%s", m.name, m.up)
		}
		if m.noTx {
			if len(m.statements) == 0 {
				t.Errorf("%s: NO TRANSACTION without statements", m.name)
			}
			for _, s := range m.statements {
				if !strings.HasSuffix(s, ";") || strings.Count(stripComments(s), ";") != 1 {
					t.Errorf("%s: statement %q is not one ;-terminated statement", m.name, s)
				}
			}
		}
	}
	// The file that replaced the due index: three statements, each run on
	// its own outside a transaction (CREATE INDEX CONCURRENTLY needs that).
	m := ms[18]
	if m.name != "00019_outbox_due_idx.sql" || !m.noTx || len(m.statements) != 3 {
		t.Fatalf("%s: noTx %v, %d statements; want 00019_outbox_due_idx.sql, NO TRANSACTION, 3", m.name, m.noTx, len(m.statements))
	}
	if !strings.HasPrefix(stripComments(m.statements[1]), "CREATE INDEX CONCURRENTLY outbox_due_idx") {
		t.Errorf("second statement: %q", m.statements[1])
	}
}

func TestParseMigrationKeepsOnlyTheUpSection(t *testing.T) {
	m, err := parseMigration("00001_x.sql", `-- a comment before
-- +goose Up
CREATE TABLE a (id int);
-- +goose StatementBegin
CREATE FUNCTION f() RETURNS int LANGUAGE sql AS $$ SELECT 1; $$;
-- +goose StatementEnd

-- +goose Down
DROP TABLE a;
`)
	if err != nil {
		t.Fatal(err)
	}
	want := "CREATE TABLE a (id int);\nCREATE FUNCTION f() RETURNS int LANGUAGE sql AS $$ SELECT 1; $$;\n\n"
	if m.up != want || m.noTx {
		t.Fatalf("up %q noTx %v; want %q, false", m.up, m.noTx, want)
	}

	m, err = parseMigration("00002_y.sql", "-- +goose NO TRANSACTION\n-- +goose Up\n-- why\nCREATE INDEX CONCURRENTLY i ON a\n\t(id);\nDROP INDEX CONCURRENTLY j;\n")
	if err != nil {
		t.Fatal(err)
	}
	if !m.noTx || len(m.statements) != 2 || m.statements[0] != "-- why\nCREATE INDEX CONCURRENTLY i ON a\n\t(id);" || m.statements[1] != "DROP INDEX CONCURRENTLY j;" {
		t.Fatalf("noTx %v statements %q", m.noTx, m.statements)
	}
}

func TestParseMigrationRefuses(t *testing.T) {
	for name, text := range map[string]string{
		"no Up":                 "CREATE TABLE a (id int);\n",
		"Down first":            "-- +goose Down\nDROP TABLE a;\n-- +goose Up\nCREATE TABLE a (id int);\n",
		"two Ups":               "-- +goose Up\nSELECT 1;\n-- +goose Up\nSELECT 2;\n",
		"empty Up":              "-- +goose Up\n-- nothing\n-- +goose Down\nDROP TABLE a;\n",
		"unknown annotation":    "-- +goose ENVSUB ON\n-- +goose Up\nSELECT 1;\n",
		"NO TRANSACTION block":  "-- +goose NO TRANSACTION\n-- +goose Up\n-- +goose StatementBegin\nSELECT 1;\n-- +goose StatementEnd\n",
		"NO TRANSACTION dollar": "-- +goose NO TRANSACTION\n-- +goose Up\nDO $$ BEGIN PERFORM 1; END $$;\n",
		"NO TRANSACTION no ;":   "-- +goose NO TRANSACTION\n-- +goose Up\nCREATE INDEX CONCURRENTLY i ON a (id);\nDROP INDEX CONCURRENTLY j\n",
	} {
		if m, err := parseMigration("00009_bad.sql", text); err == nil {
			t.Errorf("%s: parsed (%+v), want an error", name, m)
		} else if !strings.Contains(err.Error(), "00009_bad.sql") {
			t.Errorf("%s: error %q does not name the file", name, err)
		}
	}
}
