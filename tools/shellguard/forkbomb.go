package shellguard

import "mvdan.cc/sh/v3/syntax"

// forkBombs blocks functions that call themselves (directly or through
// each other) while running copies in parallel: `:(){ :|:& };:`.
func (c *checker) forkBombs(f *syntax.File) {
	bodies := map[string][]*syntax.Stmt{}
	syntax.Walk(f, func(n syntax.Node) bool {
		if fd, ok := n.(*syntax.FuncDecl); ok && fd.Body != nil {
			names := fd.Names
			if fd.Name != nil {
				names = append(names, fd.Name)
			}
			for _, name := range names {
				bodies[name.Value] = append(bodies[name.Value], fd.Body)
			}
		}
		return true
	})
	if len(bodies) == 0 {
		return
	}
	calls := map[string]map[string]bool{}
	parallel := map[string]bool{}
	for name, list := range bodies {
		calls[name] = map[string]bool{}
		for _, body := range list {
			syntax.Walk(body, func(n syntax.Node) bool {
				switch x := n.(type) {
				case *syntax.CallExpr:
					if len(x.Args) > 0 {
						for _, callee := range chain(evalWords(x.Args)) {
							if _, ok := bodies[callee]; ok {
								calls[name][callee] = true
							}
						}
					}
				case *syntax.BinaryCmd:
					if x.Op == syntax.Pipe || x.Op == syntax.PipeAll {
						parallel[name] = true
					}
				case *syntax.Stmt:
					if x.Background || x.Coprocess || x.Disown {
						parallel[name] = true
					}
				case *syntax.CoprocClause:
					parallel[name] = true
				}
				return true
			})
		}
	}
	for _, scc := range recursiveGroups(calls) {
		for _, name := range scc {
			if parallel[name] {
				c.block(CategoryForkBomb, "a function starts copies of itself in parallel")
				return
			}
		}
	}
}

// recursiveGroups returns the groups of functions that call each other in
// a cycle (Tarjan's strongly connected components; a single function counts
// when it calls itself).
func recursiveGroups(calls map[string]map[string]bool) [][]string {
	index := map[string]int{}
	low := map[string]int{}
	onStack := map[string]bool{}
	var stack []string
	var groups [][]string
	var visit func(v string)
	visit = func(v string) {
		index[v] = len(index)
		low[v] = index[v]
		stack = append(stack, v)
		onStack[v] = true
		for w := range calls[v] {
			if _, seen := index[w]; !seen {
				visit(w)
				low[v] = min(low[v], low[w])
			} else if onStack[w] {
				low[v] = min(low[v], index[w])
			}
		}
		if low[v] != index[v] {
			return
		}
		var group []string
		for {
			w := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			onStack[w] = false
			group = append(group, w)
			if w == v {
				break
			}
		}
		if len(group) > 1 || calls[v][v] {
			groups = append(groups, group)
		}
	}
	for v := range calls {
		if _, seen := index[v]; !seen {
			visit(v)
		}
	}
	return groups
}
