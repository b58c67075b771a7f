package test

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/internal/testdeps"
	"github.com/ioprobe/ioprobe/internal/testwait"
)

// Tests that cannot hang or lie, checked on every test file of the
// repository the way TestNothingKillsByName checks for kills by name:
//
//   - no require or assert, and no use of the test's t, inside a
//     require.Eventually condition: Eventually runs it on a goroutine of
//     its own, where a failed require stops that goroutine, and Eventually
//     waits out its timeout to say "Condition never satisfied" instead of
//     what failed. require.EventuallyWithT with the collect (c) is the
//     way: what failed in the last attempt is reported.
//   - no t.Fatal, t.Skip or require (nor t passed to a helper that may
//     use them) on a goroutine other than the test's — a go statement,
//     an errgroup's or a WaitGroup's Go, an HTTP handler: FailNow must be
//     called from the test's goroutine. Errors go back through a channel,
//     or assert (t.Errorf) with a WaitGroup.
//   - no sleep as synchronisation: no time.Sleep, no bare <-time.After,
//     and no select case on time.After that does not fail the test (a
//     wait for something not to happen). Wait on the event itself. A
//     pause that is the point (an idle window to measure, a helper
//     process holding a device until it is killed) says why on its line
//     or the line above: //hygiene:sleep <why>.
//   - no skip for a dependency except through internal/testdeps (Need,
//     Missing, Without), which fails the test under make test, where the
//     dependency was installed. Any other t.Skip says why it is not about
//     what make test installs: //hygiene:skip <why> (a kernel feature, a
//     machine's layout, -short, a helper process).
//   - no Eventually (or EventuallyWithT) with a deadline under
//     testwait.HygieneBound: it waits for something that will happen,
//     so its deadline only stops a hang, and a tight one fails a slow
//     machine (testwait.Patience is the usual bound). A short deadline
//     that is the point says why on the line of the call or of the
//     deadline, or the line above: //hygiene:wait <why>. Never (what
//     must not happen in a window) is not judged.

// testCodeRoots are the directories whose test code is checked.
var testCodeRoots = []string{"../cmd", "../internal", "../pkg", "../test"}

// testFile is one parsed file of test code.
type testFile struct {
	path  string
	fset  *token.FileSet
	file  *ast.File
	lines []string
}

// testCode parses every _test.go file under testCodeRoots, and every
// other Go file that imports "testing" (the helper packages tests share:
// testloop, enginetest…), apart from internal/testdeps, whose skips are
// the mechanism.
func testCode(t *testing.T) []*testFile {
	t.Helper()
	var out []*testFile
	for _, root := range testCodeRoots {
		require.NoError(t, filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if n := d.Name(); n == "testdata" || n == "node_modules" || path == "../internal/testdeps" {
					return filepath.SkipDir
				}
				return nil
			}
			if !strings.HasSuffix(path, ".go") {
				return nil
			}
			src, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			if !strings.HasSuffix(path, "_test.go") && !bytes.Contains(src, []byte(`"testing"`)) {
				return nil
			}
			f, err := parseTestFile(path, src)
			if err != nil {
				return err
			}
			out = append(out, f)
			return nil
		}))
	}
	require.Greater(t, len(out), 100, "the test files were found")
	return out
}

func parseTestFile(path string, src []byte) (*testFile, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, parser.ParseComments)
	if err != nil {
		return nil, err
	}
	return &testFile{path: path, fset: fset, file: f, lines: strings.Split(string(src), "\n")}, nil
}

// finding is one place a rule is broken.
type finding struct {
	pos  token.Position
	rule string
	what string
}

func (f finding) String() string {
	return fmt.Sprintf("%s:%d: %s: %s", f.pos.Filename, f.pos.Line, f.rule, f.what)
}

const (
	ruleEventually = "inside an Eventually condition"
	ruleGoroutine  = "on a goroutine other than the test's"
	ruleSleep      = "sleep as synchronisation"
	ruleSkip       = "skip"
	ruleDetach     = "loop device detached by name"
	ruleShortWait  = "short Eventually deadline"
)

// check returns what f breaks of the six rules.
func (f *testFile) check() []finding {
	c := &checker{f: f}
	ast.Inspect(f.file, c.visit)
	return c.found
}

type checker struct {
	f     *testFile
	found []finding
	seen  map[string]bool // a rule broken on a line is said once
	// comms are the receives of select cases, judged by timedCase.
	comms map[ast.Stmt]bool
}

func (c *checker) report(n ast.Node, rule, format string, args ...any) {
	pos := c.f.fset.Position(n.Pos())
	key := fmt.Sprintf("%d %s", pos.Line, rule)
	if c.seen == nil {
		c.seen = map[string]bool{}
	}
	if c.seen[key] {
		return
	}
	c.seen[key] = true
	c.found = append(c.found, finding{pos: pos, rule: rule, what: fmt.Sprintf(format, args...)})
}

func (c *checker) src(n ast.Node) string {
	var b bytes.Buffer
	_ = printer.Fprint(&b, c.f.fset, n)
	return b.String()
}

// allowRE are the allow-comments: //hygiene:sleep, //hygiene:skip and
// //hygiene:wait, each followed by why.
var allowRE = map[string]*regexp.Regexp{
	"sleep": regexp.MustCompile(`//hygiene:sleep\s+\S`),
	"skip":  regexp.MustCompile(`//hygiene:skip\s+\S`),
	// A detach by name that cannot go through testloop.Detach says why.
	"detach": regexp.MustCompile(`//hygiene:detach\s+\S`),
	"wait":   regexp.MustCompile(`//hygiene:wait\s+\S`),
}

// allowed reports whether the line of n, or the line above it, carries
// //hygiene:<what> followed by a reason.
func (c *checker) allowed(n ast.Node, what string) bool {
	line := c.f.fset.Position(n.Pos()).Line
	for _, l := range []int{line, line - 1} {
		if l >= 1 && l <= len(c.f.lines) && allowRE[what].MatchString(c.f.lines[l-1]) {
			return true
		}
	}
	return false
}

func (c *checker) visit(n ast.Node) bool {
	switch n := n.(type) {
	case *ast.CallExpr:
		c.call(n)
	case *ast.GoStmt:
		c.goStmt(n)
	case *ast.FuncLit:
		if isHandler(n) {
			c.offTheTest(n.Body, "an HTTP handler (the server's goroutine)", map[*ast.FuncLit]bool{n: true})
		}
	case *ast.ExprStmt:
		if c.comms[n] {
			break
		}
		if u, ok := n.X.(*ast.UnaryExpr); ok && u.Op == token.ARROW && isPkgCall(u.X, "time", "After") && !c.allowed(n, "sleep") {
			c.report(n, ruleSleep, "<-time.After as a sleep: wait on the event itself")
		}
	case *ast.CommClause:
		if c.comms == nil {
			c.comms = map[ast.Stmt]bool{}
		}
		c.comms[n.Comm] = true
		c.timedCase(n)
	}
	return true
}

// call checks Eventually conditions and deadlines, Go(func) methods,
// sleeps and skips.
func (c *checker) call(n *ast.CallExpr) {
	if pkg, name, ok := pkgCall(n); ok {
		if (pkg == "require" || pkg == "assert") && strings.HasPrefix(name, "Eventually") && len(n.Args) > 2 {
			c.deadline(n, n.Args[2], pkg+"."+name)
		}
		switch {
		case (pkg == "require" || pkg == "assert") && (name == "Eventually" || name == "Eventuallyf" || name == "Never" || name == "Neverf"):
			if len(n.Args) > 1 {
				c.eventually(n.Args[1], name, false)
			}
		case (pkg == "require" || pkg == "assert") && (name == "EventuallyWithT" || name == "EventuallyWithTf"):
			if len(n.Args) > 1 {
				c.eventually(n.Args[1], name, true)
			}
		case pkg == "time" && name == "Sleep":
			if !c.allowed(n, "sleep") {
				c.report(n, ruleSleep, "time.Sleep: wait on the event itself, or say why the pause is the point (//hygiene:sleep <why>)")
			}
		}
	}
	if detachesByName(n) && !c.allowed(n, "detach") {
		c.report(n, ruleDetach, "losetup -d by name: the name may be another process's device by now, and the detach may be deferred to its last close; use testloop.Detach or DetachAndWait (or say why not: //hygiene:detach <why>)")
	}
	if sel, ok := n.Fun.(*ast.SelectorExpr); ok {
		if sel.Sel.Name == "Go" && len(n.Args) == 1 {
			if lit, ok := n.Args[0].(*ast.FuncLit); ok {
				c.offTheTest(lit.Body, "a function run by "+c.src(sel.X)+".Go", map[*ast.FuncLit]bool{lit: true})
			}
		}
		if id, ok := sel.X.(*ast.Ident); ok && isTestingObj(id) && strings.HasPrefix(sel.Sel.Name, "Skip") {
			c.skip(n)
		}
	}
}

// detachesByName reports whether a call passes "losetup" then "-d" (or
// "--detach") as literal arguments: exec.Command, a test's run helper.
func detachesByName(n *ast.CallExpr) bool {
	for i := 0; i+1 < len(n.Args); i++ {
		if stringLit(n.Args[i]) == "losetup" && (stringLit(n.Args[i+1]) == "-d" || stringLit(n.Args[i+1]) == "--detach") {
			return true
		}
	}
	return false
}

func stringLit(e ast.Expr) string {
	if lit, ok := e.(*ast.BasicLit); ok && lit.Kind == token.STRING {
		return strings.Trim(lit.Value, "`\"")
	}
	return ""
}

// eventually checks a condition of Eventually (withT: EventuallyWithT,
// whose collect takes require and assert).
func (c *checker) eventually(cond ast.Expr, name string, withT bool) {
	seen := map[*ast.FuncLit]bool{}
	var lit *ast.FuncLit
	switch e := cond.(type) {
	case *ast.FuncLit:
		lit = e
	case *ast.Ident:
		lit = localFunc(e)
	}
	if lit == nil {
		return
	}
	seen[lit] = true
	c.walk(lit.Body, seen, func(n ast.Node) {
		switch n := n.(type) {
		case *ast.CallExpr:
			if pkg, fn, ok := pkgCall(n); ok && (pkg == "require" || pkg == "assert") && !withT {
				c.report(n, ruleEventually, "%s.%s in a %s condition: use require.EventuallyWithT and assert on its collect", pkg, fn, name)
			}
		case *ast.Ident:
			if isTestingObj(n) && declaredOutside(n, seen) {
				c.report(n, ruleEventually, "%s used in a %s condition (a failure there stops the condition's goroutine, not the test): use the collect of require.EventuallyWithT", n.Name, name)
			}
		}
	})
}

// deadline judges the deadline d of an Eventually call n: one written
// out in the call (time.Second, 10*time.Second, 5e9) under
// testwait.HygieneBound is a finding unless //hygiene:wait says why. A
// named bound (testwait.Patience, a constant of the package) is not
// judged here: its declaration says why it is what it is.
func (c *checker) deadline(n *ast.CallExpr, d ast.Expr, name string) {
	v, ok := durationOf(d)
	if !ok || v >= testwait.HygieneBound || c.allowed(n, "wait") || c.allowed(d, "wait") {
		return
	}
	c.report(n, ruleShortWait, "%s waits at most %s for what will happen: a hang bound (testwait.Patience), or say why it is short (//hygiene:wait <why>)", name, v)
}

// durationOf evaluates a duration written out with literals and the
// time package's units; ok is false for anything else.
func durationOf(e ast.Expr) (time.Duration, bool) {
	switch e := e.(type) {
	case *ast.ParenExpr:
		return durationOf(e.X)
	case *ast.BasicLit:
		f, err := strconv.ParseFloat(e.Value, 64)
		return time.Duration(f), err == nil && (e.Kind == token.INT || e.Kind == token.FLOAT)
	case *ast.SelectorExpr:
		units := map[string]time.Duration{"Nanosecond": time.Nanosecond, "Microsecond": time.Microsecond,
			"Millisecond": time.Millisecond, "Second": time.Second, "Minute": time.Minute, "Hour": time.Hour}
		id, ok := e.X.(*ast.Ident)
		u, known := units[e.Sel.Name]
		return u, ok && id.Name == "time" && known
	case *ast.BinaryExpr:
		x, okx := durationOf(e.X)
		y, oky := durationOf(e.Y)
		if e.Op == token.MUL && okx && oky {
			return x * y, true
		}
	}
	return 0, false
}

// goStmt checks what a go statement runs.
func (c *checker) goStmt(g *ast.GoStmt) {
	for _, a := range g.Call.Args {
		if id, ok := a.(*ast.Ident); ok && isTestingObj(id) {
			c.report(a, ruleGoroutine, "%s passed to a function run by a go statement: report back through a channel", id.Name)
		}
	}
	var lit *ast.FuncLit
	switch f := g.Call.Fun.(type) {
	case *ast.FuncLit:
		lit = f
	case *ast.Ident:
		lit = localFunc(f)
	}
	if lit != nil {
		c.offTheTest(lit.Body, "a go statement", map[*ast.FuncLit]bool{lit: true})
	}
}

// offTheTestAllowed are what a goroutine may call on a test's t: they do
// not stop the calling goroutine.
var offTheTestAllowed = map[string]bool{"Log": true, "Logf": true, "Error": true, "Errorf": true, "Fail": true, "Failed": true, "Name": true, "Helper": true}

// offTheTest checks body, run on a goroutine other than the test's.
func (c *checker) offTheTest(body *ast.BlockStmt, where string, seen map[*ast.FuncLit]bool) {
	// assert.X(t, …) is fine there: its t is only told Errorf.
	assertArgs := map[*ast.Ident]bool{}
	c.walk(body, seen, func(n ast.Node) {
		switch n := n.(type) {
		case *ast.CallExpr:
			pkg, fn, ok := pkgCall(n)
			if ok && pkg == "require" {
				c.report(n, ruleGoroutine, "require.%s in %s: report back through a channel, or use assert and wait for the goroutine", fn, where)
			}
			if ok && pkg == "assert" && len(n.Args) > 0 {
				if id, ok := n.Args[0].(*ast.Ident); ok {
					assertArgs[id] = true
				}
			}
			if sel, ok := n.Fun.(*ast.SelectorExpr); ok {
				if id, ok := sel.X.(*ast.Ident); ok && isTestingObj(id) && declaredOutside(id, seen) {
					assertArgs[id] = true // judged here, not as a bare identifier
					if !offTheTestAllowed[sel.Sel.Name] {
						c.report(n, ruleGoroutine, "%s.%s in %s: FailNow and its kind must run on the test's goroutine", id.Name, sel.Sel.Name, where)
					}
				}
			}
		case *ast.Ident:
			if isTestingObj(n) && !assertArgs[n] && declaredOutside(n, seen) {
				c.report(n, ruleGoroutine, "%s used in %s (a helper given it may stop that goroutine, not the test)", n.Name, where)
			}
		}
	})
}

// walk calls visit on every node of body, and of the local closures
// (f := func…) body calls, as far as they go.
func (c *checker) walk(body ast.Node, seen map[*ast.FuncLit]bool, visit func(ast.Node)) {
	ast.Inspect(body, func(n ast.Node) bool {
		if call, ok := n.(*ast.CallExpr); ok {
			if id, ok := call.Fun.(*ast.Ident); ok {
				if lit := localFunc(id); lit != nil && !seen[lit] {
					seen[lit] = true
					c.walk(lit.Body, seen, visit)
				}
			}
		}
		if n != nil {
			visit(n)
		}
		return true
	})
}

// failing are the methods that fail a test.
var failing = regexp.MustCompile(`^(Fatal|Fatalf|Error|Errorf|FailNow|Fail)$`)

// timedCase checks a select case on time.After: a watchdog (its body
// fails the test) is fine; a case that carries on is a timed wait for
// something not to happen, which a loaded machine passes wrongly.
func (c *checker) timedCase(cc *ast.CommClause) {
	var recv ast.Expr
	switch s := cc.Comm.(type) {
	case *ast.ExprStmt:
		recv = s.X
	case *ast.AssignStmt:
		if len(s.Rhs) == 1 {
			recv = s.Rhs[0]
		}
	}
	u, ok := recv.(*ast.UnaryExpr)
	if !ok || u.Op != token.ARROW || !isPkgCall(u.X, "time", "After") {
		return
	}
	fails := false
	for _, s := range cc.Body {
		ast.Inspect(s, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			if pkg, _, ok := pkgCall(call); ok && (pkg == "require" || pkg == "assert") {
				fails = true
			}
			if id, ok := call.Fun.(*ast.Ident); ok && id.Name == "panic" {
				fails = true
			}
			if sel, ok := call.Fun.(*ast.SelectorExpr); ok && failing.MatchString(sel.Sel.Name) {
				fails = true
			}
			return true
		})
		if _, ok := s.(*ast.ReturnStmt); ok {
			fails = true // the caller is told (a helper's timeout error)
		}
	}
	if !fails && !c.allowed(cc, "sleep") {
		c.report(cc, ruleSleep, "a select case on time.After that does not fail: a timed wait for something not to happen; wait on an event (or use a time.Ticker for a pace)")
	}
}

// skipMentionsDep finds a skip about something make test installs.
var skipMentionsDep = regexp.MustCompile(`(?i)Geteuid|LookPath|not installed|test-deps|make test|needs root|losetup`)

// skip checks a t.Skip call.
func (c *checker) skip(n *ast.CallExpr) {
	if !c.allowed(n, "skip") {
		c.report(n, ruleSkip, "t.%s: skip for a dependency with testdeps.Need or testdeps.Missing (a failure under make test); any other skip says why it is not one (//hygiene:skip <why>)",
			n.Fun.(*ast.SelectorExpr).Sel.Name)
		return
	}
	// Even with the comment, a skip about root or an installed program
	// goes through testdeps.
	text := c.src(n)
	if stmt := c.enclosingIf(n); stmt != nil {
		if stmt.Init != nil {
			text += c.src(stmt.Init)
		}
		text += c.src(stmt.Cond)
	}
	if skipMentionsDep.MatchString(text) {
		c.report(n, ruleSkip, "skips for root or a program make test installs: use testdeps.Need (it fails under make test)")
	}
}

// enclosingIf is the innermost if statement whose body holds n.
func (c *checker) enclosingIf(n ast.Node) *ast.IfStmt {
	var found *ast.IfStmt
	ast.Inspect(c.f.file, func(m ast.Node) bool {
		if m == nil || m.Pos() > n.Pos() || m.End() < n.End() {
			return false
		}
		if s, ok := m.(*ast.IfStmt); ok && s.Body.Pos() <= n.Pos() && n.End() <= s.Body.End() {
			found = s
		}
		return true
	})
	return found
}

// pkgCall returns pkg and name of a call pkg.Name(…) whose pkg is an
// identifier that is not a local variable (an imported package).
func pkgCall(call *ast.CallExpr) (pkg, name string, ok bool) {
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok {
		return "", "", false
	}
	id, ok := sel.X.(*ast.Ident)
	if !ok || id.Obj != nil {
		return "", "", false
	}
	return id.Name, sel.Sel.Name, true
}

func isPkgCall(e ast.Expr, pkg, name string) bool {
	call, ok := e.(*ast.CallExpr)
	if !ok {
		return false
	}
	p, n, ok := pkgCall(call)
	return ok && p == pkg && n == name
}

// declaredOutside reports whether id was declared outside the function
// literals being checked: a closure's own t parameter is whatever its
// caller there passes, and that argument is what is judged.
func declaredOutside(id *ast.Ident, lits map[*ast.FuncLit]bool) bool {
	d, ok := id.Obj.Decl.(ast.Node)
	if !ok {
		return true
	}
	for lit := range lits {
		if lit.Pos() <= d.Pos() && d.End() <= lit.End() {
			return false
		}
	}
	return true
}

// isTestingObj reports whether id names a parameter or variable of a
// testing type (*testing.T, testing.TB, require.TestingT…): the test's t.
// assert.CollectT is not one: it is made for the condition's goroutine.
func isTestingObj(id *ast.Ident) bool {
	if id.Obj == nil || id.Obj.Kind != ast.Var {
		return false
	}
	switch d := id.Obj.Decl.(type) {
	case *ast.Field:
		return isTestingType(d.Type)
	case *ast.ValueSpec:
		return d.Type != nil && isTestingType(d.Type)
	}
	return false
}

func isTestingType(e ast.Expr) bool {
	if s, ok := e.(*ast.StarExpr); ok {
		e = s.X
	}
	sel, ok := e.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	pkg, ok := sel.X.(*ast.Ident)
	if !ok {
		return false
	}
	switch pkg.Name {
	case "testing":
		return sel.Sel.Name == "T" || sel.Sel.Name == "B" || sel.Sel.Name == "F" || sel.Sel.Name == "TB"
	case "require", "assert":
		return sel.Sel.Name == "TestingT"
	}
	return false
}

// isHandler reports whether lit is an HTTP handler (a
// http.ResponseWriter parameter): a server runs it on its goroutines.
func isHandler(lit *ast.FuncLit) bool {
	for _, p := range lit.Type.Params.List {
		if sel, ok := p.Type.(*ast.SelectorExpr); ok && sel.Sel.Name == "ResponseWriter" {
			if id, ok := sel.X.(*ast.Ident); ok && id.Name == "http" {
				return true
			}
		}
	}
	return false
}

// localFunc is the function literal a local variable id was set to where
// it was declared (f := func…, var f = func…), or nil.
func localFunc(id *ast.Ident) *ast.FuncLit {
	if id.Obj == nil || id.Obj.Kind != ast.Var {
		return nil
	}
	switch d := id.Obj.Decl.(type) {
	case *ast.AssignStmt:
		for i, l := range d.Lhs {
			if lid, ok := l.(*ast.Ident); ok && lid.Name == id.Name && i < len(d.Rhs) {
				lit, _ := d.Rhs[i].(*ast.FuncLit)
				return lit
			}
		}
	case *ast.ValueSpec:
		for i, n := range d.Names {
			if n.Name == id.Name && i < len(d.Values) {
				lit, _ := d.Values[i].(*ast.FuncLit)
				return lit
			}
		}
	}
	return nil
}

// testHygiene is every finding in the repository's test code, by rule.
func testHygiene(t *testing.T) map[string][]finding {
	t.Helper()
	out := map[string][]finding{}
	for _, f := range testCode(t) {
		for _, fd := range f.check() {
			out[fd.rule] = append(out[fd.rule], fd)
		}
	}
	return out
}

func requireNoFindings(t *testing.T, rule string) {
	t.Helper()
	var lines []string
	for _, f := range testHygiene(t)[rule] {
		lines = append(lines, f.String())
	}
	sort.Strings(lines)
	if len(lines) > 0 {
		t.Errorf("%d place(s) %s:\n%s", len(lines), rule, strings.Join(lines, "\n"))
	}
}

func TestNoAssertionsInsideEventually(t *testing.T) { requireNoFindings(t, ruleEventually) }

func TestNoFailNowOffTheTestGoroutine(t *testing.T) { requireNoFindings(t, ruleGoroutine) }

func TestNoSleepsAsSynchronisation(t *testing.T) { requireNoFindings(t, ruleSleep) }

func TestSkipsForDependenciesGoThroughTestdeps(t *testing.T) { requireNoFindings(t, ruleSkip) }

func TestNoLoopDetachByName(t *testing.T)         { requireNoFindings(t, ruleDetach) }
func TestNoShortEventuallyDeadlines(t *testing.T) { requireNoFindings(t, ruleShortWait) }

// The checker finds each rule broken in a file written to break it, and
// nothing in the same code written as the rules ask.
func TestTestHygieneCheckerFindsWhatItShould(t *testing.T) {
	bad := `package x

func TestBad(t *testing.T) {
	require.Eventually(t, func() bool {
		require.NoError(t, err)
		return value(t, reg) > 0
	}, time.Second, time.Millisecond)
	runs := func() int { return count(t) }
	require.Eventually(t, func() bool { return runs() == 1 }, time.Second, time.Millisecond)
	require.EventuallyWithT(t, func(c *assert.CollectT) { require.NoError(t, err) }, time.Second, time.Millisecond)
	go func() { require.NoError(t, err) }()
	go func() { t.Fatal("no") }()
	go func() { done <- runCmd(t, cmd) }()
	go helper(t)
	wg.Go(func() { do(t) })
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { require.Equal(t, 1, 2) }))
	time.Sleep(time.Second)
	<-time.After(time.Second)
	select {
	case <-done:
	case <-time.After(20 * time.Millisecond):
	}
	if _, err := exec.LookPath("fio"); err != nil {
		t.Skip("fio is not installed")
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root") //hygiene:skip said to be something else
	}
	_ = exec.Command("losetup", "-d", dev).Run()
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.Positive(c, value(c, reg))
	}, 10*time.Second, 20*time.Millisecond)
	assert.Eventually(t, ready.Load, 5e9, 1e7)
}
`
	good := `package x

func TestGood(t *testing.T) {
	require.Eventually(t, func() bool { return ready.Load() }, testwait.Patience, time.Millisecond)
	require.Eventually(t, paused.Load, time.Minute, time.Millisecond)
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		require.NoError(c, err)
		assert.Positive(c, value(c, reg))
	}, 2*time.Minute, time.Millisecond)
	require.Never(t, fired.Load, 100*time.Millisecond, time.Millisecond)
	//hygiene:wait the deadline is what is tested
	require.Eventually(t, ready.Load, time.Second, time.Millisecond)
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.True(c, ready.Load())
	}, time.Second, time.Millisecond) //hygiene:wait the deadline is what is tested
	go func() { done <- run(cmd) }()
	go func() {
		defer wg.Done()
		assert.NoError(t, err)
		t.Logf("fine")
	}()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(200) }))
	time.Sleep(100 * time.Millisecond) //hygiene:sleep an idle window to measure
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("hung")
	}
	testdeps.Need(t, testdeps.Tool("fio"))
	if testing.Short() {
		//hygiene:skip -short leaves out the tests that run I/O
		t.Skip("runs I/O")
	}
	require.NoError(t, testloop.DetachAndWait(dev, backing))
	_ = run("losetup", "-d", dev) //hygiene:detach a name to go by that testloop cannot match
}
`
	check := func(src string) map[string][]int {
		f, err := parseTestFile("x_test.go", []byte(src))
		require.NoError(t, err)
		got := map[string][]int{}
		for _, fd := range f.check() {
			got[fd.rule] = append(got[fd.rule], fd.pos.Line)
		}
		return got
	}
	require.Empty(t, check(good))
	require.Equal(t, map[string][]int{
		ruleEventually: {5, 6, 8, 10},
		ruleGoroutine:  {11, 12, 13, 14, 15, 16},
		ruleSleep:      {17, 18, 21},
		ruleSkip:       {24, 27},
		ruleDetach:     {29},
		ruleShortWait:  {4, 9, 10, 30, 33},
	}, check(bad))
}

// make test fails what it installed and then found missing: scripts/test.sh
// sets testdeps.EnvVar after test-deps.sh and before the tests run.
func TestMakeTestFailsSkipsForWhatItInstalls(t *testing.T) {
	b, err := os.ReadFile("../scripts/test.sh")
	require.NoError(t, err)
	s := string(b)
	deps := strings.Index(s, "\n./scripts/test-deps.sh ")
	set := strings.Index(s, "\n\texport "+testdeps.EnvVar+"=1\n")
	tests := strings.Index(s, "\n\"$GO\" test ")
	require.Positive(t, deps, "test.sh runs test-deps.sh")
	require.Positive(t, set, "test.sh sets %s", testdeps.EnvVar)
	require.Positive(t, tests, "test.sh runs the tests")
	require.Less(t, deps, set, "%s is set once test-deps.sh has installed everything", testdeps.EnvVar)
	require.Less(t, set, tests, "%s is set for the tests", testdeps.EnvVar)
}

// Every program a test names to testdeps is one scripts/test-deps.sh
// installs (testdeps.Need refuses the others, but only when the test gets
// that far: as root, say).
func TestTestdepsProgramsAreInstalledByTestDeps(t *testing.T) {
	named := 0
	for _, f := range testCode(t) {
		ast.Inspect(f.file, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			pkg, fn, ok := pkgCall(call)
			if !ok || pkg != "testdeps" {
				return true
			}
			var arg ast.Expr
			switch {
			case fn == "Tool" && len(call.Args) == 1:
				arg = call.Args[0]
			case fn == "LookPath" && len(call.Args) == 2:
				arg = call.Args[1]
			default:
				return true
			}
			lit, ok := arg.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			name := strings.Trim(lit.Value, "`\"")
			named++
			ok, err := testdeps.Provides(testdeps.Tool(name))
			require.NoError(t, err)
			require.True(t, ok, "%s: %s is not installed by scripts/test-deps.sh: add a `have %s || need+=(PACKAGE)` line there", f.fset.Position(lit.Pos()), name, name)
			return true
		})
	}
	require.Greater(t, named, 10, "the programs named to testdeps were found")
}

// helperFile matches the file a package's shared test helpers live in —
// helpers_test.go, or helpers_linux_test.go for code of one system — and
// the files of shared test data (fixtures) and fakes.
var helperFile = regexp.MustCompile(`^(helpers(_[a-z0-9]+)?_test\.go|.*fixtures.*_test\.go|fake[a-z0-9_]*_test\.go)$`)

// A function one test file calls from another is a shared helper, and
// shared helpers live in one file per package (as restic's
// integration_helpers_test.go): helpers_test.go. A reader finds them
// there, and nobody writes a second copy in another file.
func TestSharedHelpersLiveInOneFile(t *testing.T) {
	type pkgKey struct{ dir, name string }
	byPkg := map[pkgKey][]*testFile{}
	for _, f := range testCode(t) {
		if strings.HasSuffix(f.path, "_test.go") {
			k := pkgKey{filepath.Dir(f.path), f.file.Name.Name}
			byPkg[k] = append(byPkg[k], f)
		}
	}
	var bad []string
	for _, files := range byPkg {
		declared := map[string]*testFile{}
		for _, f := range files {
			for _, d := range f.file.Decls {
				if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil && !regexp.MustCompile(`^(Test|Benchmark|Fuzz|Example)`).MatchString(fn.Name.Name) {
					declared[fn.Name.Name] = f
				}
			}
		}
		users := map[string]map[string]bool{}
		for _, f := range files {
			local := map[*ast.Ident]bool{}
			ast.Inspect(f.file, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.FuncDecl:
					local[n.Name] = true // a method's name, or the function's own
				case *ast.SelectorExpr:
					local[n.Sel] = true
				case *ast.KeyValueExpr:
					if id, ok := n.Key.(*ast.Ident); ok {
						local[id] = true
					}
				case *ast.Ident:
					// Package-level names of other files are left unresolved by the parser.
					if d := declared[n.Name]; d != nil && d != f && n.Obj == nil && !local[n] {
						if users[n.Name] == nil {
							users[n.Name] = map[string]bool{}
						}
						users[n.Name][filepath.Base(f.path)] = true
					}
				}
				return true
			})
		}
		for name, in := range users {
			d := declared[name]
			if !helperFile.MatchString(filepath.Base(d.path)) {
				var from []string
				for f := range in {
					from = append(from, f)
				}
				sort.Strings(from)
				bad = append(bad, fmt.Sprintf("%s: %s, used by %s", d.path, name, strings.Join(from, ", ")))
			}
		}
	}
	sort.Strings(bad)
	if len(bad) > 0 {
		t.Errorf("%d shared helper(s) outside their package's helpers_test.go:\n%s", len(bad), strings.Join(bad, "\n"))
	}
}

// TestOnlyThisPackageHasPrometheusTests: make test skips the tests named
// prometheusTestPrefix… in every package (go test -skip) and runs them
// apart in this one only (scripts/test.sh): one elsewhere would never run.
func TestOnlyThisPackageHasPrometheusTests(t *testing.T) {
	found := 0
	for _, f := range testCode(t) {
		for _, d := range f.file.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv != nil || !strings.HasPrefix(fn.Name.Name, prometheusTestPrefix) {
				continue
			}
			if filepath.Dir(f.path) != "../test" {
				t.Errorf("%s: %s: make test runs the tests named %s… of ./test only; rename it", f.path, fn.Name.Name, prometheusTestPrefix)
				continue
			}
			found++
		}
	}
	if found == 0 {
		t.Errorf("no test here is named %s…: is scripts/test.sh's Prometheus part still needed?", prometheusTestPrefix)
	}
}
