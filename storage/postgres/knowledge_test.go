package postgres_test

import (
	"context"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/bot/knowledge"
	"github.com/switchboard-chat/switchboard/storage/postgres"
	"github.com/switchboard-chat/switchboard/storage/postgres/pgtest"
	"github.com/switchboard-chat/switchboard/tools"
)

// queued lists the knowledge queue as "scope path hash-prefix".
func queued(t *testing.T, db *postgres.DB) map[string]string {
	t.Helper()
	rows, err := db.Pool().Query(context.Background(), `SELECT scope, path, content_hash FROM knowledge_jobs`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var scope, path, hash string
		if err := rows.Scan(&scope, &path, &hash); err != nil {
			t.Fatal(err)
		}
		out[scope+" "+path] = hash
	}
	return out
}

func putDoc(t *testing.T, db *postgres.DB, scope, path, content string) tools.DocKey {
	t.Helper()
	key := tools.DocKey{Agent: "assistant", Scope: scope, Path: path}
	if err := db.PutDoc(context.Background(), key, content); err != nil {
		t.Fatal(err)
	}
	return key
}

// claimAll claims every due job (a long lease).
func claimAll(t *testing.T, db *postgres.DB) []knowledge.Job {
	t.Helper()
	jobs, err := db.ClaimJobs(context.Background(), 100, time.Hour, 5)
	if err != nil {
		t.Fatal(err)
	}
	return jobs
}

// TestKnowledgeQueueFollowsMemoryWrites: a write or change of a memory
// document queues it (one row per document, the newest content's hash), an
// unchanged rewrite, a vector update and any other document do not, and a
// delete drops the row and the document's facts.
func TestKnowledgeQueueFollowsMemoryWrites(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	const chat = "chat:telegram:1"
	putDoc(t, db, chat, "memory/people.md", "Alice works at Acme.")
	putDoc(t, db, chat, "MEMORY.md", "Bob")
	putDoc(t, db, "", "SOUL.md", "be kind")
	putDoc(t, db, chat, "memory/notes.txt", "not a memory document")
	putDoc(t, db, chat, "notes/memory.md", "nor this")
	got := queued(t, db)
	if len(got) != 2 || got[chat+" memory/people.md"] == "" || got[chat+" MEMORY.md"] == "" {
		t.Fatalf("queue after the writes = %v; want the two memory documents", got)
	}
	jobs := claimAll(t, db)
	for _, j := range jobs {
		if err := db.FinishJob(ctx, j); err != nil {
			t.Fatal(err)
		}
	}
	if got := queued(t, db); len(got) != 0 {
		t.Fatalf("queue after finishing = %v", got)
	}

	key := putDoc(t, db, chat, "memory/people.md", "Alice works at Acme.") // unchanged
	if err := db.SetDocVector(ctx, key, []float32{1, 0}); err != nil {
		t.Fatal(err)
	}
	if got := queued(t, db); len(got) != 0 {
		t.Fatalf("an unchanged rewrite or a vector queued: %v", got)
	}
	putDoc(t, db, chat, "memory/people.md", "Alice works at Initech.")
	putDoc(t, db, chat, "memory/people.md", "Alice works at Globex.")
	got = queued(t, db)
	jobs = claimAll(t, db)
	if len(got) != 1 || len(jobs) != 1 || jobs[0].Content != "Alice works at Globex." || jobs[0].Hash != got[chat+" memory/people.md"] {
		t.Fatalf("two changes queued %v, claimed %+v; want one row with the newest content", got, jobs)
	}
	if _, err := db.ReplaceFacts(ctx, key, jobs[0].Hash, knowledge.Facts{Entities: []knowledge.Entity{{Key: "alice", Name: "Alice"}}}); err != nil {
		t.Fatal(err)
	}
	putDoc(t, db, chat, "memory/people.md", "") // deletes
	if got := queued(t, db); len(got) != 0 {
		t.Errorf("queue after deleting = %v", got)
	}
	if n := count(t, db, `SELECT count(*) FROM knowledge_entities`); n != 0 {
		t.Errorf("%d entities outlived their document", n)
	}
}

func count(t *testing.T, db *postgres.DB, sql string, args ...any) int {
	t.Helper()
	var n int
	if err := db.Pool().QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func facts(entities []string, relations ...[3]string) knowledge.Facts {
	var f knowledge.Facts
	for _, e := range entities {
		name, typ, _ := strings.Cut(e, "/")
		f.Entities = append(f.Entities, knowledge.Entity{Key: knowledge.Key(name), Name: name, Type: typ})
	}
	for _, r := range relations {
		f.Relations = append(f.Relations, knowledge.Relation{From: knowledge.Key(r[0]), Type: r[1], To: knowledge.Key(r[2])})
	}
	return f
}

// store writes content at key and replaces its facts with f.
func store(t *testing.T, db *postgres.DB, scope, path, content string, f knowledge.Facts) {
	t.Helper()
	key := putDoc(t, db, scope, path, content)
	jobs := claimAll(t, db)
	var hash string
	for _, j := range jobs {
		if j.Key == key {
			hash = j.Hash
		}
		_ = db.FinishJob(context.Background(), j)
	}
	ok, err := db.ReplaceFacts(context.Background(), key, hash, f)
	if err != nil || !ok {
		t.Fatalf("ReplaceFacts(%s) = %v, %v", path, ok, err)
	}
}

// TestKnowledgeReplaceOnReextract: a document's new facts replace its old
// ones whole, other documents' facts stay, and facts extracted from a
// version that is no longer current are not written.
func TestKnowledgeReplaceOnReextract(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	const chat = "chat:telegram:1"
	store(t, db, chat, "memory/a.md", "v1", facts([]string{"Alice/person", "Acme/org"}, [3]string{"Alice", "works_at", "Acme"}))
	store(t, db, chat, "memory/b.md", "b", facts([]string{"Bob/person", "Acme/org"}, [3]string{"Bob", "works_at", "Acme"}))
	store(t, db, chat, "memory/a.md", "v2", facts([]string{"Alice/person", "Globex/org"}, [3]string{"Alice", "works_at", "Globex"}))
	if n := count(t, db, `SELECT count(*) FROM knowledge_entities WHERE path = 'memory/a.md'`); n != 2 {
		t.Errorf("memory/a.md has %d entities after re-extraction, want 2", n)
	}
	if n := count(t, db, `SELECT count(*) FROM knowledge_relations WHERE path = 'memory/a.md' AND to_key = 'acme'`); n != 0 {
		t.Errorf("memory/a.md's old relation survived re-extraction")
	}
	if n := count(t, db, `SELECT count(*) FROM knowledge_relations WHERE path = 'memory/b.md'`); n != 1 {
		t.Errorf("memory/b.md's relation went with memory/a.md's re-extraction")
	}

	key := putDoc(t, db, chat, "memory/a.md", "v3")
	stale := claimAll(t, db)[0]
	putDoc(t, db, chat, "memory/a.md", "v4")
	ok, err := db.ReplaceFacts(ctx, key, stale.Hash, facts([]string{"Mallory"}))
	if err != nil || ok {
		t.Fatalf("ReplaceFacts of an outdated version = %v, %v; want nothing written", ok, err)
	}
	if err := db.FinishJob(ctx, stale); err != nil {
		t.Fatal(err)
	}
	if got := queued(t, db); len(got) != 1 {
		t.Errorf("finishing the outdated job removed the newer one: queue %v", got)
	}
	if n := count(t, db, `SELECT count(*) FROM knowledge_entities WHERE key = 'mallory'`); n != 0 {
		t.Errorf("facts of an outdated version were written")
	}
}

// graphNames lists a search's nodes as "name@depth" and its edges as
// "from-type-to path", sorted.
func graphNames(g knowledge.Graph) (nodes, edges []string) {
	names := map[string]string{}
	for _, n := range g.Nodes {
		names[n.Key] = n.Name
		nodes = append(nodes, n.Name+"@"+string(rune('0'+n.Depth)))
	}
	for _, e := range g.Edges {
		edges = append(edges, names[e.From]+"-"+e.Type+"-"+names[e.To]+" "+e.Path)
	}
	sort.Strings(nodes)
	sort.Strings(edges)
	return nodes, edges
}

// TestKnowledgeGraphSearchDepthAndScopes: the walk goes 1, 2 and 3
// relations out, in either direction, across the documents and the
// agent's shared scope, and never into another chat's graph.
func TestKnowledgeGraphSearchDepthAndScopes(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	const mine, other = "chat:telegram:1", "chat:telegram:2"
	// Alice -works_at-> Acme <-owns- Carol -lives_in-> Paris (shared) -in-> France
	store(t, db, mine, "memory/people.md", "p", facts([]string{"Alice/person", "Acme/org", "Carol/person"},
		[3]string{"Alice", "works_at", "Acme"}, [3]string{"Carol", "owns", "Acme"}))
	store(t, db, "", "MEMORY.md", "shared", facts([]string{"Carol/person", "Paris/city", "France/country"},
		[3]string{"Carol", "lives_in", "Paris"}, [3]string{"Paris", "in", "France"}))
	store(t, db, other, "memory/people.md", "o", facts([]string{"Alice/person", "Eve/person"},
		[3]string{"Eve", "spies_on", "Alice"}))
	scopes := []string{mine, ""}
	search := func(query string, depth int) ([]string, []string) {
		t.Helper()
		g, err := db.SearchGraph(ctx, "assistant", scopes, knowledge.Query{Terms: []string{query}, Depth: depth, MaxEntities: 50, MaxRelations: 100})
		if err != nil {
			t.Fatal(err)
		}
		return graphNames(g)
	}
	for _, c := range []struct {
		depth int
		nodes []string
	}{
		{0, []string{"Alice@0"}},
		{1, []string{"Acme@1", "Alice@0"}},
		{2, []string{"Acme@1", "Alice@0", "Carol@2"}},
		{3, []string{"Acme@1", "Alice@0", "Carol@2", "Paris@3"}},
	} {
		nodes, edges := search("alice", c.depth)
		if !slices.Equal(nodes, c.nodes) {
			t.Errorf("depth %d: nodes %v, want %v", c.depth, nodes, c.nodes)
		}
		for _, e := range edges {
			if strings.Contains(e, "Eve") {
				t.Errorf("depth %d: another chat's relation %q was found", c.depth, e)
			}
		}
		if c.depth == 3 && !slices.Contains(edges, "Carol-lives_in-Paris MEMORY.md") {
			t.Errorf("depth 3: edges %v lack the shared scope's Carol-lives_in-Paris with its source", edges)
		}
	}
	if nodes, _ := search("eve", 3); len(nodes) != 0 {
		t.Errorf("another chat's entity Eve was found: %v", nodes)
	}
	g, err := db.SearchGraph(ctx, "assistant", []string{other, ""}, knowledge.Query{Terms: []string{"alice"}, Depth: 1, MaxEntities: 1, MaxRelations: 100})
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Nodes) != 1 || !g.MoreNodes {
		t.Errorf("a search bounded at 1 entity = %+v; want 1 and MoreNodes", g)
	}
	store(t, db, mine, "memory/labs.md", "l", facts([]string{"Big Acme Labs/org", "Acme Labs/org"}))
	g, err = db.SearchGraph(ctx, "assistant", scopes, knowledge.Query{Terms: []string{"acme"}, Depth: 0, MaxEntities: 50, MaxRelations: 100})
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, n := range g.Nodes {
		order = append(order, n.Name)
	}
	if want := []string{"Acme", "Acme Labs", "Big Acme Labs"}; !slices.Equal(order, want) {
		t.Errorf("matches in the order %v, want the exact one first, then the shortest: %v", order, want)
	}
	if nodes, _ := search("50%_off", 1); len(nodes) != 0 {
		t.Errorf("LIKE wildcards in a query matched: %v", nodes)
	}
}

// TestKnowledgeClaimSkipLocked: two workers claiming at once take each job
// once.
func TestKnowledgeClaimSkipLocked(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	const n = 40
	for i := range n {
		putDoc(t, db, "chat:telegram:1", "memory/"+string(rune('a'+i%26))+string(rune('a'+i/26))+".md", "x")
	}
	var mu sync.Mutex
	seen := map[string]int{}
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				jobs, err := db.ClaimJobs(ctx, 3, time.Hour, 5)
				if err != nil {
					t.Error(err)
					return
				}
				if len(jobs) == 0 {
					return
				}
				mu.Lock()
				for _, j := range jobs {
					seen[j.Key.Path]++
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(seen) != n {
		t.Errorf("%d of %d jobs claimed", len(seen), n)
	}
	for p, c := range seen {
		if c != 1 {
			t.Errorf("%s claimed %d times", p, c)
		}
	}
	if jobs := claimAll(t, db); len(jobs) != 0 {
		t.Errorf("leased jobs were claimed again: %d", len(jobs))
	}
}

// TestKnowledgeRetryAndGiveUp: a retried job is due after its delay with
// its reason kept; a refunded attempt is not counted; a job at the attempt
// limit is not claimed until its document changes.
func TestKnowledgeRetryAndGiveUp(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	putDoc(t, db, "chat:telegram:1", "memory/a.md", "x")
	j := claimAll(t, db)[0]
	if err := db.RetryJob(ctx, j, 0, true, "budget"); err != nil {
		t.Fatal(err)
	}
	j = claimAll(t, db)[0]
	if j.Attempts != 1 {
		t.Errorf("after a refunded attempt the claim counts %d attempts, want 1", j.Attempts)
	}
	if err := db.RetryJob(ctx, j, time.Hour, false, "model down"); err != nil {
		t.Fatal(err)
	}
	if jobs := claimAll(t, db); len(jobs) != 0 {
		t.Errorf("a job retried in an hour was claimed now")
	}
	if n := count(t, db, `SELECT count(*) FROM knowledge_jobs WHERE last_error = 'model down'`); n != 1 {
		t.Errorf("the retry's reason is not kept")
	}
	if _, err := db.Pool().Exec(ctx, `UPDATE knowledge_jobs SET attempts = 5, next_at = now()`); err != nil {
		t.Fatal(err)
	}
	if jobs := claimAll(t, db); len(jobs) != 0 {
		t.Errorf("a job at the attempt limit was claimed")
	}
	putDoc(t, db, "chat:telegram:1", "memory/a.md", "y")
	if jobs := claimAll(t, db); len(jobs) != 1 || jobs[0].Attempts != 1 {
		t.Errorf("a changed document's job = %+v; want it claimable from attempt 1", jobs)
	}
}

// TestKnowledgeForgetRemovesFacts: /forget's deletion of a chat's memory
// documents takes their facts and queued jobs with them, and leaves
// another chat's.
func TestKnowledgeForgetRemovesFacts(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	store(t, db, "chat:telegram:1", "memory/a.md", "a", facts([]string{"Alice", "Acme"}, [3]string{"Alice", "works_at", "Acme"}))
	store(t, db, "chat:telegram:1:77", "MEMORY.md", "t", facts([]string{"Topic"}))
	store(t, db, "chat:telegram:2", "memory/a.md", "b", facts([]string{"Bob"}))
	putDoc(t, db, "chat:telegram:1", "memory/queued.md", "not extracted yet")
	if _, _, err := db.ForgetChat(ctx, "telegram:1", "telegram:9"); err != nil {
		t.Fatal(err)
	}
	if n := count(t, db, `SELECT count(*) FROM knowledge_entities WHERE scope <> 'chat:telegram:2'`); n != 0 {
		t.Errorf("%d entities of the forgotten chat remain", n)
	}
	if n := count(t, db, `SELECT count(*) FROM knowledge_relations`); n != 0 {
		t.Errorf("%d relations of the forgotten chat remain", n)
	}
	if got := queued(t, db); len(got) != 0 {
		t.Errorf("the forgotten chat's documents are still queued: %v", got)
	}
	if n := count(t, db, `SELECT count(*) FROM knowledge_entities WHERE scope = 'chat:telegram:2'`); n != 1 {
		t.Errorf("another chat's facts went too")
	}
}
