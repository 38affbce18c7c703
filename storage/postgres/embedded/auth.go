package embedded

import (
	"context"
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/switchboard-chat/switchboard/storage/postgres/redact"
)

// passwordFileName is the file under the data directory (never in the
// cluster, which the server's user owns) holding the password of role
// "switchboard", readable by the daemon's user only.
const passwordFileName = "postgres.password"

// hbaConf is the pg_hba.conf of every embedded cluster: role "switchboard"
// (and any other) must give the password, on the socket and on loopback.
const hbaConf = `# Written by switchboard: every connection must give the password in
# <data_dir>/` + passwordFileName + ` (SCRAM); there is no trust or peer access.
# TYPE  DATABASE  USER  ADDRESS       METHOD
local   all       all                 scram-sha-256
host    all       all   127.0.0.1/32  scram-sha-256
host    all       all   ::1/128       scram-sha-256
`

// loadPassword reads the password from the data directory. With create it
// makes a new random one when there is none, and says so with created.
func (e *Server) loadPassword(create bool) (created bool, err error) {
	path := filepath.Join(e.dataDir, passwordFileName)
	b, err := os.ReadFile(path)
	if err == nil {
		pw := strings.TrimSpace(string(b))
		if pw == "" {
			return false, fmt.Errorf("embedded postgres: password file %s is empty; remove it and start again to set a new password", path)
		}
		if fi, err := os.Stat(path); err == nil && fi.Mode().Perm()&0o077 != 0 {
			if err := os.Chmod(path, 0o600); err != nil {
				return false, fmt.Errorf("embedded postgres: make %s private: %w", path, err)
			}
			e.logger.Warn("embedded postgres: the password file was readable by other users; made it private", "file", path)
		}
		e.password = pw
		return false, nil
	}
	if !errors.Is(err, os.ErrNotExist) || !create {
		return false, fmt.Errorf("embedded postgres: read password file: %w", err)
	}
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return false, fmt.Errorf("embedded postgres: generate a password: %w", err)
	}
	pw := hex.EncodeToString(raw)
	tmp := path + ".new"
	_ = os.Remove(tmp)
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return false, fmt.Errorf("embedded postgres: write password file: %w; make sure data_dir is writable", err)
	}
	_, werr := f.WriteString(pw + "\n")
	if err := errors.Join(werr, f.Sync(), f.Close()); err != nil {
		_ = os.Remove(tmp)
		return false, fmt.Errorf("embedded postgres: write password file: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return false, fmt.Errorf("embedded postgres: write password file: %w", err)
	}
	e.password = pw
	return true, nil
}

// scramVerifier returns the SCRAM-SHA-256 verifier PostgreSQL stores for
// password, so that neither a statement nor a server log ever holds the
// password itself.
func scramVerifier(password string) (string, error) {
	const iterations = 4096
	salt := make([]byte, 16)
	if _, err := rand.Read(salt); err != nil {
		return "", err
	}
	salted, err := pbkdf2.Key(sha256.New, password, salt, iterations, sha256.Size)
	if err != nil {
		return "", err
	}
	mac := func(key []byte, msg string) []byte {
		h := hmac.New(sha256.New, key)
		h.Write([]byte(msg))
		return h.Sum(nil)
	}
	stored := sha256.Sum256(mac(salted, "Client Key"))
	b64 := base64.StdEncoding.EncodeToString
	return fmt.Sprintf("SCRAM-SHA-256$%d:%s$%s:%s", iterations, b64(salt), b64(stored[:]), b64(mac(salted, "Server Key"))), nil
}

// alterRoleSQL sets the password of role "switchboard" to verifier.
func alterRoleSQL(verifier string) string {
	return "ALTER ROLE " + pgx.Identifier{embeddedUser}.Sanitize() + " PASSWORD '" + verifier + "'"
}

// hbaTrusts reports whether the cluster's pg_hba.conf lets anyone in
// without a password (method trust), as clusters made before passwords
// were introduced do.
func (e *Server) hbaTrusts() (bool, error) {
	b, err := os.ReadFile(filepath.Join(e.pgData, "pg_hba.conf"))
	if err != nil {
		return false, fmt.Errorf("embedded postgres: read pg_hba.conf: %w", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		line, _, _ = strings.Cut(line, "#")
		for _, f := range strings.Fields(line) {
			if f == "trust" {
				return true, nil
			}
		}
	}
	return false, nil
}

// writeHBA replaces the cluster's pg_hba.conf with hbaConf, atomically and
// owned by the server's user.
func (e *Server) writeHBA() error {
	path := filepath.Join(e.pgData, "pg_hba.conf")
	tmp := path + ".switchboard"
	if err := os.WriteFile(tmp, []byte(hbaConf), 0o600); err != nil {
		return fmt.Errorf("embedded postgres: write pg_hba.conf: %w", err)
	}
	if err := e.user.chown(tmp); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("embedded postgres: write pg_hba.conf: %w", err)
	}
	return nil
}

// secureOffline sets the password and writes pg_hba.conf of a cluster no
// server runs on, through a single-user backend (which needs no
// authentication). It upgrades a trust cluster before its first start and
// gives a cluster whose password file was lost a new password.
func (e *Server) secureOffline(ctx context.Context) error {
	verifier, err := scramVerifier(e.password)
	if err != nil {
		return fmt.Errorf("embedded postgres: hash the password: %w", err)
	}
	cmd := e.user.command(ctx, e.home, e.bins.postgres, "--single", "-D", e.pgData,
		"-c", "log_min_error_statement=panic", "-c", "exit_on_error=on", "postgres")
	cmd.Stdin = strings.NewReader(alterRoleSQL(verifier) + ";\n")
	out, err := cmd.CombinedOutput()
	if err == nil && (strings.Contains(string(out), "ERROR:") || strings.Contains(string(out), "FATAL:")) {
		err = errors.New("the statement failed")
	}
	if err != nil {
		return redact.Error(fmt.Errorf("embedded postgres: set the password in single-user mode: %w: %s; is another server running on %s? stop it and start again",
			err, lastLines(string(out), 6), e.pgData), verifier)
	}
	return e.writeHBA()
}

// secureOnline upgrades a running server that still trusts everyone: it
// sets the password over a (trusted) connection, rewrites pg_hba.conf and
// has the server reload it.
func (e *Server) secureOnline(ctx context.Context) error {
	verifier, err := scramVerifier(e.password)
	if err != nil {
		return fmt.Errorf("embedded postgres: hash the password: %w", err)
	}
	conn, err := pgx.Connect(ctx, e.url("postgres"))
	if err != nil {
		return fmt.Errorf("embedded postgres: connect to set a password: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, alterRoleSQL(verifier)); err != nil {
		return redact.Error(fmt.Errorf("embedded postgres: set the password: %w", err), verifier)
	}
	if err := e.writeHBA(); err != nil {
		return err
	}
	if _, err := conn.Exec(ctx, "SELECT pg_reload_conf()"); err != nil {
		return fmt.Errorf("embedded postgres: reload pg_hba.conf: %w; run `pg_ctl reload -D %s`", err, e.pgData)
	}
	return nil
}

// isAuthError reports whether err is the server refusing the password.
func isAuthError(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && (pgErr.Code == "28P01" || pgErr.Code == "28000")
}
