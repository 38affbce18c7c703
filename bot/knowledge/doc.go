// Package knowledge is the knowledge graph of memory documents: the
// entities and relations a model extracts from each memory document
// (MEMORY.md, memory.md, memory/*.md) as it is written, kept per document
// in the agent's memory scopes, and knowledge_graph_search, which finds
// entities by name and walks their neighbourhood.
//
// Extraction never blocks a conversation: the store queues every write of
// a memory document in the write's own transaction, and the Worker, on
// every replica, claims queued documents, asks the model for their facts,
// checks the answer against a strict schema and replaces the document's
// facts in one transaction. A failed call is retried with backoff; a job
// claimed by a replica that stopped is retried when its lease lapses.
package knowledge
