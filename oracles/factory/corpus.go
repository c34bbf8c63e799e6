package main

// The corpus: schematics drawn from a fixed seed over every field of the
// factory's Schematic struct (v1.5.0), each written in one of several text
// forms: the factory's own Marshal, go-yaml v4 Dump with other options, a
// yaml.Node tree with random styles and field order, JSON (plain and with
// \u escapes), and two hand-written YAML writers (block and flow) with
// random quoting, comments, number spellings and null/empty forms.

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/siderolabs/image-factory/pkg/schematic"
	"github.com/siderolabs/talos/pkg/machinery/imager/imageropts"
	yaml "go.yaml.in/yaml/v4"
)

// Strings that YAML 1.1 or 1.2 read as another type, indicators, quotes,
// escapes, line breaks, non-ASCII and astral characters, controls.
var specials = []string{
	"yes", "no", "Yes", "NO", "on", "off", "On", "OFF", "y", "n", "Y", "N", "~", "null", "Null", "NULL",
	"true", "True", "FALSE", "0x1F", "0X1f", "0o17", "0b101", "1e3", "1E3", "1e+3", "012", "08", "09", "0",
	"-0", "+1", "-1", "1_000", "1.5", "0.", ".5", "-.5", "1.2.3", ".inf", "-.Inf", "+.INF", ".nan", ".NaN",
	"1e999", "2001-01-01", "2001-12-14t21:59:43.10-05:00", "2001-12-14 21:59:43.10 -5", "2002-12-14",
	"=", "==", "<<", "1:30", "190:20:30", "-1:30", "1:30.5", "-", "--", "---", "...", "--- x", "", " ",
	"a b", "a: b", "a:b", "a #b", "a#b", "#x", "@x", "`x", "'", "\"", "\\", "a\\b", "\\n", "{a}", "[a]",
	"{}", "[]", "*a", "&a", "!tag", "!!str", "%x", "?", "? x", "?x", ":", ":x", "a:", "|", ">", "|-",
	"vga=791", "console=ttyS0,115200n8", "net.ifnames=0", "a=b=c", "key=", "=value", "-lockdown",
	"usb-storage.quirks=174c:55aa:u", "siderolabs/gvisor", "café", "日本語", "Ünïcödé", "ß", "😀",
	"𝔘𝔫𝔦", "a😀b", "a\tb", "\t", "a\nb", "a\nb\n", "a\nb\n\n", "\na", "\n", " \n ", "a\n\nb", " lead",
	"trail ", "a \nb", "a\n b", "a\r\nb", "a\rb", "a\u2028b", "a\u2029b", "a\u0085b", "\u00a0", "a\u00a0b",
	"\ufeffa", "a\x00b", "\x01", "a\x7f", "a\u200bb", "\u202eabc", "${x}", "%{x}", "$${x}", "a'b",
	"it's: x", "\"q\"", "'q'", "a\"b'c", "x,y", "a]b", "a}b", "a,b", "é=1", "\ue000", "\ufffd", "\uffff",
	"a\u0080b", "k\u00e9y", "A", "z", "_", "$", "0.0.0.0", "10.0.0.1/24", "::1", "fe80::1%eth0",
	"http://x/y?z=1#f", "C:\\path", "a/b/c", "..", "../../etc/passwd",
}

var extensionNames = []string{
	"siderolabs/gvisor", "siderolabs/kata-containers", "siderolabs/iscsi-tools", "siderolabs/util-linux-tools",
	"siderolabs/intel-ucode", "siderolabs/amd-ucode", "siderolabs/qemu-guest-agent", "siderolabs/tailscale",
	"siderolabs/nvidia-container-toolkit-lts", "siderolabs/zfs", "siderolabs/drbd",
}

var optionKeys = []string{
	"configTxt", "configTxtAppend", "a", "b", "a1", "a2", "a10", "a01", "b/01", "b/1", "x9", "x10", "1", "10",
	"2", "", "yes", "on", "n", "null", "~", "a b", "a:b", "-", "é", "ü1", "日本", "key_1", "key-1", "KEY",
	"z", "0x1", "1.5", ".a", "!x", "#c",
}

type gen struct{ r *rand.Rand }

func (g *gen) chance(p float64) bool { return g.r.Float64() < p }

func (g *gen) pick(list []string) string { return list[g.r.IntN(len(list))] }

func (g *gen) word() string {
	const letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=,"
	n := 1 + g.r.IntN(12)
	b := make([]byte, n)

	for i := range b {
		b[i] = letters[g.r.IntN(len(letters))]
	}

	return string(b)
}

// str draws a string: a special, a word, or a concatenation of both.
func (g *gen) str() string {
	switch g.r.IntN(10) {
	case 0, 1, 2, 3:
		return g.pick(specials)
	case 4, 5:
		return g.word()
	case 6:
		return strings.Repeat(g.word(), 1+g.r.IntN(30))
	case 7:
		return g.multiline()
	default:
		var b strings.Builder

		for range 2 + g.r.IntN(2) {
			if g.chance(0.5) {
				b.WriteString(g.pick(specials))
			} else {
				b.WriteString(g.word())
			}
		}

		return b.String()
	}
}

func (g *gen) multiline() string {
	lines := []string{"apiVersion: v1alpha1", "kind: HostnameConfig", "hostname: x", "  indented: 1", "",
		"# comment", "- item", "key: \"quoted\"", "tab\there", "trailing ", "日本語", "😀", "---", "a: |", "  b"}

	var b strings.Builder

	if g.chance(0.1) {
		b.WriteString(" ")
	}

	n := 1 + g.r.IntN(5)
	for i := range n {
		b.WriteString(g.pick(lines))

		if i < n-1 || g.chance(0.6) {
			b.WriteString("\n")
		}
	}

	if g.chance(0.15) {
		b.WriteString("\n")
	}

	return b.String()
}

func (g *gen) optionValue(depth int) any {
	k := g.r.IntN(12)
	if depth >= 3 && k >= 9 {
		k = g.r.IntN(9)
	}

	switch k {
	case 0:
		return nil
	case 1:
		return g.chance(0.5)
	case 2:
		return []int{0, 1, -1, 42, 255, 1 << 40, math.MaxInt64, math.MinInt64}[g.r.IntN(8)]
	case 3:
		return []uint64{math.MaxUint64, 1<<63 + 5}[g.r.IntN(2)]
	case 4:
		return []float64{0.5, 1.5, 1e6, 1e21, 1e-7, 123.456, -2.5, 3, 100000, 1234567, math.Inf(1),
			math.Inf(-1), math.NaN(), 5e-324, math.MaxFloat64}[g.r.IntN(15)]
	case 5, 6, 7, 8:
		return g.str()
	case 9, 10:
		m := map[string]any{}
		for range g.r.IntN(4) {
			m[g.pick(optionKeys)] = g.optionValue(depth + 1)
		}

		return m
	default:
		l := []any{}
		for range g.r.IntN(4) {
			l = append(l, g.optionValue(depth+1))
		}

		return l
	}
}

func (g *gen) schematic() schematic.Schematic {
	var s schematic.Schematic

	if g.chance(0.08) {
		s.Owner = g.str()
	}

	if g.chance(0.35) {
		if g.chance(0.8) {
			s.Overlay.Image = g.pick([]string{"siderolabs/sbc-raspberrypi", "siderolabs/sbc-rockchip", g.str()})
		}

		if g.chance(0.8) {
			s.Overlay.Name = g.pick([]string{"rpi_generic", "rock64", "turingrk1", g.str()})
		}

		if g.chance(0.5) {
			s.Overlay.Options = map[string]any{}
			for range 1 + g.r.IntN(4) {
				s.Overlay.Options[g.pick(optionKeys)] = g.optionValue(0)
			}
		}
	}

	c := &s.Customization

	if g.chance(0.15) {
		c.EmbeddedMachineConfiguration = g.multiline()
	}

	if g.chance(0.6) {
		for range g.r.IntN(5) {
			c.ExtraKernelArgs = append(c.ExtraKernelArgs, g.str())
		}
	}

	if g.chance(0.3) {
		for range g.r.IntN(4) {
			c.Meta = append(c.Meta, schematic.MetaValue{Key: uint8(g.r.IntN(256)), Value: g.str()})
		}
	}

	if g.chance(0.6) {
		for range g.r.IntN(5) {
			if g.chance(0.8) {
				c.SystemExtensions.OfficialExtensions = append(c.SystemExtensions.OfficialExtensions, g.pick(extensionNames))
			} else {
				c.SystemExtensions.OfficialExtensions = append(c.SystemExtensions.OfficialExtensions, g.str())
			}
		}
	}

	if g.chance(0.2) {
		c.Bootloader = imageropts.BootloaderKind(g.r.IntN(4))
	}

	if g.chance(0.25) {
		sb := &c.SecureBoot
		both := g.chance(0.5)

		if both || g.chance(0.5) {
			sb.EnrollKeys = g.pick([]string{"off", "manual", "if-safe", "force", "Force", "always", g.str()})
		}

		if both || sb.EnrollKeys == "" {
			sb.IncludeWellKnownCertificates = g.chance(0.7)
		}
	}

	if g.chance(0.15) {
		c.DiskImage.SectorSize = uint([]uint{0, 512, 4096, 520, 1 << 33}[g.r.IntN(5)])
	}

	return s
}

// ---------------------------------------------------------------------------
// Generic tree form: the same schematic as ordered keys, so writers can pick
// field order and spelling. Scalars keep their Go type.

type kv struct {
	k string
	v any
}

type omap []kv

func tree(s *schematic.Schematic, g *gen, keepEmpty bool) omap {
	var root omap

	if s.Owner != "" {
		root = append(root, kv{"owner", s.Owner})
	}

	o := s.Overlay
	if o.Image != "" || o.Name != "" || len(o.Options) > 0 || (keepEmpty && g.chance(0.2)) {
		var ov omap
		if o.Image != "" || g.chance(0.5) {
			ov = append(ov, kv{"image", o.Image})
		}

		if o.Name != "" || g.chance(0.5) {
			ov = append(ov, kv{"name", o.Name})
		}

		if len(o.Options) > 0 {
			ov = append(ov, kv{"options", anyTree(o.Options)})
		}

		root = append(root, kv{"overlay", ov})
	}

	c := s.Customization

	var cm omap

	if c.EmbeddedMachineConfiguration != "" {
		cm = append(cm, kv{"embeddedMachineConfiguration", c.EmbeddedMachineConfiguration})
	}

	if len(c.ExtraKernelArgs) > 0 || (keepEmpty && g.chance(0.1)) {
		l := []any{}
		for _, a := range c.ExtraKernelArgs {
			l = append(l, a)
		}

		cm = append(cm, kv{"extraKernelArgs", l})
	}

	if len(c.Meta) > 0 {
		l := []any{}
		for _, m := range c.Meta {
			l = append(l, omap{{"key", m.Key}, {"value", m.Value}})
		}

		cm = append(cm, kv{"meta", l})
	}

	if len(c.SystemExtensions.OfficialExtensions) > 0 || (keepEmpty && g.chance(0.1)) {
		l := []any{}
		for _, e := range c.SystemExtensions.OfficialExtensions {
			l = append(l, e)
		}

		cm = append(cm, kv{"systemExtensions", omap{{"officialExtensions", l}}})
	}

	if c.Bootloader != 0 || (keepEmpty && g.chance(0.05)) {
		cm = append(cm, kv{"bootloader", c.Bootloader})
	}

	if c.SecureBoot.EnrollKeys != "" || c.SecureBoot.IncludeWellKnownCertificates {
		var sb omap
		if c.SecureBoot.EnrollKeys != "" {
			sb = append(sb, kv{"enrollKeys", c.SecureBoot.EnrollKeys})
		}

		if c.SecureBoot.IncludeWellKnownCertificates || (keepEmpty && g.chance(0.3)) {
			sb = append(sb, kv{"includeWellKnownCertificates", c.SecureBoot.IncludeWellKnownCertificates})
		}

		cm = append(cm, kv{"secureboot", sb})
	}

	if c.DiskImage.SectorSize != 0 {
		cm = append(cm, kv{"diskImage", omap{{"sectorSize", c.DiskImage.SectorSize}}})
	}

	if len(cm) > 0 || !keepEmpty || g.chance(0.7) {
		root = append(root, kv{"customization", cm})
	}

	if keepEmpty {
		g.r.Shuffle(len(root), func(i, j int) { root[i], root[j] = root[j], root[i] })

		for i := range root {
			if m, ok := root[i].v.(omap); ok {
				g.r.Shuffle(len(m), func(a, b int) { m[a], m[b] = m[b], m[a] })
			}
		}
	}

	return root
}

func anyTree(v any) any {
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}

		sort.Strings(keys)

		m := omap{}
		for _, k := range keys {
			m = append(m, kv{k, anyTree(x[k])})
		}

		return m
	case []any:
		l := []any{}
		for _, e := range x {
			l = append(l, anyTree(e))
		}

		return l
	default:
		return v
	}
}

// ---------------------------------------------------------------------------
// yaml.Node form: random field order and random (valid) styles.

func (g *gen) node(v any) *yaml.Node {
	switch x := v.(type) {
	case omap:
		n := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		if g.chance(0.3) {
			n.Style = yaml.FlowStyle
		}

		for _, e := range x {
			n.Content = append(n.Content, g.scalarNode(e.k, true), g.node(e.v))
		}

		return n
	case []any:
		n := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
		if g.chance(0.3) {
			n.Style = yaml.FlowStyle
		}

		for _, e := range x {
			n.Content = append(n.Content, g.node(e))
		}

		return n
	default:
		var out yaml.Node
		if err := out.Encode(v); err != nil {
			panic(err)
		}

		if out.Kind == yaml.ScalarNode && out.Tag == "!!str" {
			return g.scalarNode(out.Value, false)
		}

		return &out
	}
}

func (g *gen) scalarNode(s string, key bool) *yaml.Node {
	n := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s}

	styles := []yaml.Style{0, yaml.DoubleQuotedStyle, yaml.SingleQuotedStyle}
	if !key {
		styles = append(styles, yaml.LiteralStyle, yaml.FoldedStyle)
	}

	n.Style = styles[g.r.IntN(len(styles))]

	return n
}

// ---------------------------------------------------------------------------
// JSON form.

func jsonValue(v any) any {
	switch x := v.(type) {
	case omap:
		return x
	case []any:
		l := []any{}
		for _, e := range x {
			l = append(l, jsonValue(e))
		}

		return l
	case imageropts.BootloaderKind:
		return x.String()
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return x // written by writeJSON as YAML-only text
		}

		return x
	default:
		return v
	}
}

// writeJSON writes JSON; with escape, every non-ASCII character as \u
// escapes (surrogate pairs beyond U+FFFF) and some ASCII too.
func (g *gen) writeJSON(b *strings.Builder, v any, escape bool, indent string) {
	switch x := v.(type) {
	case omap:
		b.WriteString("{")

		for i, e := range x {
			if i > 0 {
				b.WriteString(",")
			}

			if indent != "" {
				b.WriteString("\n" + indent)
			}

			g.writeJSONString(b, e.k, escape)
			b.WriteString(": ")
			g.writeJSON(b, e.v, escape, nextIndent(indent))
		}

		b.WriteString("}")
	case []any:
		b.WriteString("[")

		for i, e := range x {
			if i > 0 {
				b.WriteString(", ")
			}

			g.writeJSON(b, e, escape, nextIndent(indent))
		}

		b.WriteString("]")
	case string:
		g.writeJSONString(b, x, escape)
	case imageropts.BootloaderKind:
		g.writeJSONString(b, x.String(), escape)
	case float64:
		switch {
		case math.IsNaN(x):
			b.WriteString(".nan")
		case math.IsInf(x, 1):
			b.WriteString(".inf")
		case math.IsInf(x, -1):
			b.WriteString("-.inf")
		default:
			b.WriteString(strconv.FormatFloat(x, 'g', -1, 64))
		}
	default:
		out, err := json.Marshal(x)
		if err != nil {
			panic(err)
		}

		b.Write(out)
	}
}

func nextIndent(indent string) string {
	if indent == "" {
		return ""
	}

	return indent + "  "
}

func (g *gen) writeJSONString(b *strings.Builder, s string, escape bool) {
	if !escape {
		out, _ := json.Marshal(s) //nolint:errchkjson
		b.Write(out)

		return
	}

	b.WriteString("\"")

	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString("\\\"")
		case r == '\\':
			b.WriteString("\\\\")
		case r == '/' && g.chance(0.5):
			b.WriteString("\\/")
		case r < 0x20 || r >= 0x7f || g.chance(0.05):
			if r > 0xFFFF {
				r -= 0x10000
				fmt.Fprintf(b, "\\u%04X\\u%04x", 0xD800+(r>>10), 0xDC00+(r&0x3FF))
			} else {
				fmt.Fprintf(b, "\\u%04x", r)
			}
		default:
			b.WriteRune(r)
		}
	}

	b.WriteString("\"")
}

// ---------------------------------------------------------------------------
// Hand-written YAML: block or flow, random quoting and spellings.

type hand struct {
	g      *gen
	b      strings.Builder
	step   int
	flow   bool
	rawPct float64
}

// scalar writes a string the way a person might: plain when it looks safe
// (and sometimes when it does not), single or double quotes, a block.
func (h *hand) scalar(s string, indent int, key bool) {
	g := h.g
	multi := strings.Contains(s, "\n")

	switch {
	case !key && !h.flow && multi && g.chance(0.6) && !strings.ContainsAny(s, "\r\u2028\u2029\u0085") &&
		!strings.HasSuffix(strings.TrimRight(s, "\n"), " ") && strings.TrimSpace(s) != "":
		h.block(s, indent)
	case g.chance(h.rawPct) || (!multi && plainLooksSafe(s) && g.chance(0.6)):
		h.b.WriteString(s)
	case !multi && g.chance(0.4) && utf8.ValidString(s) && printableASCIIish(s):
		h.b.WriteString("'" + strings.ReplaceAll(s, "'", "''") + "'")
	default:
		h.doubleQuoted(s)
	}
}

func printableASCIIish(s string) bool {
	for _, r := range s {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == 0x2028 || r == 0x2029 || r == 0xfeff {
			return false
		}
	}

	return true
}

func plainLooksSafe(s string) bool {
	if s == "" || strings.TrimSpace(s) != s {
		return false
	}

	if strings.ContainsAny(s, "#:{}[],&*!|>'\"%@`\t\r") || strings.HasPrefix(s, "-") || strings.HasPrefix(s, "?") {
		return false
	}

	return printableASCIIish(s)
}

func (h *hand) doubleQuoted(s string) {
	g := h.g
	h.b.WriteString("\"")

	for _, r := range s {
		switch {
		case r == '"':
			h.b.WriteString("\\\"")
		case r == '\\':
			h.b.WriteString("\\\\")
		case r == '\n':
			h.b.WriteString("\\n")
		case r == '\t':
			h.b.WriteString([]string{"\\t", "\t", "\\x09", "\\u0009"}[g.r.IntN(4)])
		case r == '\r':
			h.b.WriteString("\\r")
		case r == 0:
			h.b.WriteString("\\0")
		case r == 0x85:
			h.b.WriteString("\\N")
		case r == 0xa0 && g.chance(0.5):
			h.b.WriteString("\\_")
		case r == 0x2028:
			h.b.WriteString("\\L")
		case r == 0x2029:
			h.b.WriteString("\\P")
		case r == '/' && g.chance(0.3):
			h.b.WriteString("\\/")
		case r == ' ' && g.chance(0.1):
			h.b.WriteString("\\ ")
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == 0xfeff:
			fmt.Fprintf(&h.b, "\\x%02x", r)
		case r > 0xFFFF && g.chance(0.5):
			fmt.Fprintf(&h.b, "\\U%08x", r)
		case r >= 0xa0 && r <= 0xFFFF && g.chance(0.2):
			fmt.Fprintf(&h.b, "\\u%04X", r)
		default:
			h.b.WriteRune(r)
		}
	}

	h.b.WriteString("\"")
}

func (h *hand) block(s string, indent int) {
	g := h.g
	h.b.WriteString("|")

	if strings.HasPrefix(s, " ") || strings.HasPrefix(s, "\n") {
		h.b.WriteString(strconv.Itoa(h.step))
	}

	switch {
	case !strings.HasSuffix(s, "\n"):
		h.b.WriteString("-")
	case strings.HasSuffix(s, "\n\n") || s == "\n":
		h.b.WriteString("+")
	default:
		if g.chance(0.2) {
			// Keep with exactly one final break reads the same as clip.
			h.b.WriteString("+")
		}
	}

	if g.chance(0.2) {
		h.b.WriteString(" # block")
	}

	h.b.WriteString("\n")

	body := s
	if strings.HasSuffix(body, "\n") {
		body = body[:len(body)-1]
	}

	for _, line := range strings.Split(body, "\n") {
		if line != "" {
			h.b.WriteString(strings.Repeat(" ", indent+h.step) + line)
		}

		h.b.WriteString("\n")
	}

	h.b.WriteString(strings.Repeat(" ", indent))
}

func (h *hand) number(v any) string {
	g := h.g

	switch x := v.(type) {
	case uint8:
		n := uint64(x)

		return []string{strconv.FormatUint(n, 10), "0x" + strconv.FormatUint(n, 16), "0o" + strconv.FormatUint(n, 8),
			"0" + strconv.FormatUint(n, 8), strconv.FormatUint(n, 10) + ".0", "+" + strconv.FormatUint(n, 10),
			"\"" + strconv.FormatUint(n, 10) + "\"", "0b" + strconv.FormatUint(n, 2)}[g.r.IntN(8)]
	case uint:
		n := uint64(x)

		return []string{strconv.FormatUint(n, 10), "0x" + strconv.FormatUint(n, 16),
			strconv.FormatFloat(float64(n), 'e', -1, 64), strconv.FormatUint(n, 10)}[g.r.IntN(4)]
	case bool:
		if x {
			return g.pick([]string{"true", "True", "TRUE", "yes", "on", "y", "\"true\"", "'yes'"})
		}

		return g.pick([]string{"false", "False", "no", "off", "n", "~", "null", ""})
	case imageropts.BootloaderKind:
		name := x.String()

		return g.pick([]string{name, strings.ToUpper(name), "\"" + name + "\"", "'" + name + "'",
			strings.ToUpper(name[:1]) + name[1:]})
	case nil:
		return g.pick([]string{"null", "~", "Null", ""})
	case float64:
		switch {
		case math.IsNaN(x):
			return g.pick([]string{".nan", ".NaN", ".NAN"})
		case math.IsInf(x, 1):
			return g.pick([]string{".inf", "+.inf", ".Inf"})
		case math.IsInf(x, -1):
			return g.pick([]string{"-.inf", "-.INF"})
		}

		return g.pick([]string{strconv.FormatFloat(x, 'g', -1, 64), strconv.FormatFloat(x, 'e', -1, 64),
			strconv.FormatFloat(x, 'f', -1, 64)})
	case int:
		return g.pick([]string{strconv.Itoa(x), strconv.Itoa(x)})
	default:
		return fmt.Sprint(x)
	}
}

func (h *hand) value(v any, indent int) {
	switch x := v.(type) {
	case omap:
		h.mapping(x, indent)
	case []any:
		h.seq(x, indent)
	case string:
		h.scalar(x, indent, false)
	default:
		h.b.WriteString(h.number(x))
	}
}

func (h *hand) mapping(m omap, indent int) {
	g := h.g
	if len(m) == 0 {
		h.b.WriteString(g.pick([]string{"{}", "{ }", "~", ""}))

		return
	}

	if h.flow {
		h.b.WriteString("{")

		for i, e := range m {
			if i > 0 {
				h.b.WriteString(g.pick([]string{", ", ",", ",\n  "}))
			}

			h.scalar(e.k, indent, true)
			h.b.WriteString(": ")
			h.value(e.v, indent)
		}

		if g.chance(0.1) {
			h.b.WriteString(",")
		}

		h.b.WriteString("}")

		return
	}

	for i, e := range m {
		if i > 0 || indent > 0 {
			h.b.WriteString("\n" + strings.Repeat(" ", indent))
		}

		h.scalar(e.k, indent, true)
		h.b.WriteString(":")

		switch e.v.(type) {
		case omap, []any:
			h.value(e.v, indent+h.step)
		default:
			h.b.WriteString(" ")
			h.value(e.v, indent)
		}

		if g.chance(0.05) {
			h.b.WriteString(" # note")
		}
	}
}

func (h *hand) seq(l []any, indent int) {
	g := h.g
	if len(l) == 0 {
		h.b.WriteString(" " + g.pick([]string{"[]", "[ ]", "~", ""}))

		return
	}

	if h.flow {
		h.b.WriteString("[")

		for i, e := range l {
			if i > 0 {
				h.b.WriteString(", ")
			}

			h.value(e, indent)
		}

		h.b.WriteString("]")

		return
	}

	for _, e := range l {
		h.b.WriteString("\n" + strings.Repeat(" ", indent) + "- ")

		switch x := e.(type) {
		case omap:
			if len(x) == 0 {
				h.b.WriteString("{}")

				continue
			}

			// First key on the dash line, the rest aligned under it.
			sub := &hand{g: g, step: h.step, rawPct: h.rawPct}
			sub.mapping(x, 0)
			h.b.WriteString(strings.ReplaceAll(sub.b.String(), "\n", "\n"+strings.Repeat(" ", indent+2)))
		case []any:
			h.b.WriteString("[")

			for i, y := range x {
				if i > 0 {
					h.b.WriteString(", ")
				}

				fl := &hand{g: g, step: h.step, flow: true, rawPct: h.rawPct}
				fl.value(y, 0)
				h.b.WriteString(fl.b.String())
			}

			h.b.WriteString("]")
		default:
			h.value(e, indent+2)
		}
	}
}

// ---------------------------------------------------------------------------

var forms = []string{"marshal", "dump-indent2", "dump-options", "node", "json", "json-escaped", "hand-block",
	"hand-flow", "hand-raw"}

func (g *gen) render(s *schematic.Schematic, form string) []byte {
	switch form {
	case "marshal":
		out, err := s.Marshal()
		if err != nil {
			panic(err)
		}

		return out
	case "dump-indent2":
		out, err := yaml.Dump(s, yaml.WithIndent(2), yaml.WithCompactSeqIndent(g.chance(0.5)))
		if err != nil {
			panic(err)
		}

		return out
	case "dump-options":
		opts := []yaml.Option{yaml.WithIndent(2 + g.r.IntN(4)), yaml.WithLineWidth([]int{-1, 20, 40, 80}[g.r.IntN(4)]),
			yaml.WithUnicode(g.chance(0.5)), yaml.WithExplicitStart(g.chance(0.3)), yaml.WithExplicitEnd(g.chance(0.2)),
			yaml.WithFlowSimpleCollections(g.chance(0.3)),
			yaml.WithQuotePreference([]yaml.QuoteStyle{yaml.QuoteSingle, yaml.QuoteDouble, yaml.QuoteLegacy}[g.r.IntN(3)])}
		if g.chance(0.04) {
			opts = append(opts, yaml.WithCanonical(true))
		}

		out, err := yaml.Dump(s, opts...)
		if err != nil {
			panic(err)
		}

		return out
	case "node":
		n := g.node(tree(s, g, true))

		out, err := yaml.Dump(n, yaml.WithIndent(2+g.r.IntN(3)))
		if err != nil {
			panic(err)
		}

		return out
	case "json", "json-escaped":
		var b strings.Builder

		indent := ""
		if g.chance(0.5) {
			indent = "  "
		}

		g.writeJSON(&b, jsonValue(tree(s, g, form == "json-escaped")), form == "json-escaped", indent)

		return []byte(b.String())
	default:
		h := &hand{g: g, step: 2 + g.r.IntN(3), flow: form == "hand-flow"}
		if form == "hand-raw" {
			h.rawPct = 0.5
		}

		if g.chance(0.2) {
			h.b.WriteString("# schematic\n")
		}

		if g.chance(0.15) {
			h.b.WriteString("---\n")
		}

		h.mapping(tree(s, g, true), 0)
		h.b.WriteString("\n")

		if g.chance(0.05) {
			h.b.WriteString("...\n")
		}

		return []byte(h.b.String())
	}
}

// Fixed cases: forms people write by hand that the generator would rarely hit.
var fixed = map[string]string{
	"vanilla-empty-doc.yaml":     "customization:\n",
	"vanilla-braces.yaml":        "{}\n",
	"vanilla-null.yaml":          "~\n",
	"vanilla-json.json":          "{\"customization\": {}}",
	"null-fields.yaml":           "overlay: ~\ncustomization:\n  extraKernelArgs: ~\n  meta: ~\n  systemExtensions: ~\n  secureboot: ~\n  diskImage: ~\n",
	"null-items.yaml":            "customization:\n  extraKernelArgs: [a, ~, null, \"\", b]\n  meta: [~, {key: 1, value: x}]\n",
	"flow-mixed.yaml":            "{customization: {extraKernelArgs: [a, 'b c', \"d\\te\"], systemExtensions: {officialExtensions: [siderolabs/gvisor]}}}\n",
	"equals-bare.yaml":           "customization:\n  extraKernelArgs:\n    - =\n    - a=\n    - ==\n",
	"equals-quoted.yaml":         "customization:\n  extraKernelArgs: [\"=\", '=']\n",
	"meta-key-forms.yaml":        "customization:\n  meta:\n    - {key: 0xa, value: a}\n    - {key: 012, value: b}\n    - {key: 0o12, value: c}\n    - {key: 1_0, value: d}\n    - {key: 10.7, value: e}\n    - {key: 1e1, value: f}\n",
	"meta-key-quoted.yaml":       "customization:\n  meta: [{key: \"10\", value: a}]\n",
	"meta-key-overflow.yaml":     "customization:\n  meta: [{key: 256, value: a}]\n",
	"bootloader-auto.yaml":       "customization:\n  bootloader: auto\n",
	"bootloader-none.yaml":       "customization:\n  bootloader: none\n",
	"bootloader-upper.yaml":      "customization:\n  bootloader: SD-BOOT\n",
	"bootloader-empty.yaml":      "customization:\n  bootloader: \"\"\n",
	"bootloader-bad.yaml":        "customization:\n  bootloader: lilo\n",
	"secureboot-both.yaml":       "customization:\n  secureboot:\n    includeWellKnownCertificates: true\n    enrollKeys: force\n",
	"secureboot-if-safe.yaml":    "customization:\n  secureboot:\n    enrollKeys: if-safe\n",
	"secureboot-off.yaml":        "customization:\n  secureboot: {enrollKeys: off}\n",
	"secureboot-unknown.yaml":    "customization:\n  secureboot: {enrollKeys: Always}\n",
	"secureboot-yes.yaml":        "customization:\n  secureboot: {includeWellKnownCertificates: yes}\n",
	"secureboot-quoted-true.yml": "customization:\n  secureboot: {includeWellKnownCertificates: \"true\"}\n",
	"unknown-field.yaml":         "customization:\n  extraKernelArg: [a]\n",
	"duplicate-key.yaml":         "customization: {}\ncustomization: {}\n",
	"two-docs.yaml":              "customization: {}\n---\ncustomization: {extraKernelArgs: [a]}\n",
	"anchors.yaml":               "customization:\n  extraKernelArgs: &a [x, y]\noverlay:\n  name: n\n  image: i\n  options: {k: *a}\n",
	"merge-key.yaml":             "overlay:\n  name: n\n  image: i\n  options:\n    base: &b {x: 1}\n    derived:\n      <<: *b\n      y: 2\n",
	"tagged-str.yaml":            "customization:\n  extraKernelArgs: [!!str 10]\n",
	"folded.yaml":                "customization:\n  embeddedMachineConfiguration: >\n    folded\n    text\n\n    para\n",
	"literal-keep.yaml":          "customization:\n  embeddedMachineConfiguration: |+\n    a\n\n",
	"literal-indent.yaml":        "customization:\n  embeddedMachineConfiguration: |2-\n     lead\n    x\n",
	"literal-eof.yaml":           "customization:\n  embeddedMachineConfiguration: |\n    a",
	"dq-escapes.yaml":            "customization:\n  extraKernelArgs: [\"\\x41\\u00e9\\U0001F600\", \"a\\\n   b\", \"\\/\\ \\_\"]\n",
	"sq-multiline.yaml":          "customization:\n  extraKernelArgs: ['a\n\n    b', 'it''s']\n",
	"plain-multiline.yaml":       "customization:\n  extraKernelArgs:\n    - a\n      b\n",
	"tabs.yaml":                  "customization:\n  extraKernelArgs: [\"a\tb\"]\n",
	"crlf.yaml":                  "customization:\r\n  extraKernelArgs:\r\n    - a\r\n",
	"bom.yaml":                   "\ufeffcustomization:\n  extraKernelArgs: [a]\n",
	"json-surrogates.json":       "{\"customization\": {\"extraKernelArgs\": [\"\\ud83d\\ude00\"]}}",
	"json-nested.json":           "{\"overlay\": {\"image\": \"i\", \"name\": \"n\", \"options\": {\"a\": {\"b\": [1, 2.5, true, null, \"x\"]}}}}",
	"options-timestamp.yaml":     "overlay:\n  name: n\n  image: i\n  options: {d: 2001-01-01}\n",
	"options-negzero.yaml":       "overlay:\n  name: n\n  image: i\n  options: {z: -0}\n",
	"options-intkey.yaml":        "overlay:\n  name: n\n  image: i\n  options:\n    1: a\n    m: {1: x}\n",
	"options-bigint.yaml":        "overlay:\n  name: n\n  image: i\n  options: {a: 18446744073709551616, b: 9223372036854775808, c: -9223372036854775809}\n",
	"options-floats.yaml":        "overlay:\n  name: n\n  image: i\n  options: {a: 1e6, b: 0.1, c: 1_000.5, d: .5, e: 1., f: 0x_1F, g: 1e400}\n",
	"owner.yaml":                 "owner: admin\ncustomization: {}\n",
	"overlay-only-name.yaml":     "overlay: {name: rpi_generic}\n",
	"overlay-empty-options.yaml": "overlay: {name: n, image: i, options: {}}\n",
	"disk-sector.yaml":           "customization:\n  diskImage: {sectorSize: 4096}\n",
	"disk-sector-zero.yaml":      "customization:\n  diskImage: {sectorSize: 0}\n",
	"disk-sector-neg.yaml":       "customization:\n  diskImage: {sectorSize: -1}\n",
	"empty-file.yaml":            "",
	"comment-only.yaml":          "# nothing\n",
	"list-root.yaml":             "[]\n",
	"emc-doc.yaml":               "customization:\n  embeddedMachineConfiguration: |\n    apiVersion: v1alpha1\n    kind: HostnameConfig\n    ---\n    apiVersion: v1alpha1\n",
	"long-key.yaml":              "overlay:\n  name: n\n  image: i\n  options:\n    " + strings.Repeat("k", 130) + ": 1\n",
	"unicode-keys.yaml":          "overlay:\n  name: n\n  image: i\n  options: {é: 1, e: 2, ü1: 3, 日本: 4}\n",
}

func writeCorpus(dir string, n int, seed uint64) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}

	g := &gen{r: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}

	for i := range n {
		s := g.schematic()
		form := forms[i%len(forms)]

		ext := ".yaml"
		if strings.HasPrefix(form, "json") {
			ext = ".json"
		}

		name := filepath.Join(dir, fmt.Sprintf("gen-%04d-%s%s", i, form, ext))
		if err := os.WriteFile(name, g.render(&s, form), 0o644); err != nil {
			return err
		}
	}

	for name, text := range fixed {
		if err := os.WriteFile(filepath.Join(dir, "fixed-"+name), []byte(text), 0o644); err != nil {
			return err
		}
	}

	return nil
}
