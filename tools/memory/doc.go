// Package memory is the memory tool family: memory_search, by words and,
// with an embeddings model, by meaning, and memory_get. The documents
// themselves are written with the fs tools and kept in the document store.
package memory
