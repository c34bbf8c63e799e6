// Command decoded prints, as JSON, every v1alpha1 field that Talos's machinery decodes but
// whose doc comment says `docgen:nodoc` (the schema generator, tools/docgen, leaves such fields
// out of config.schema.json): its path, its `Deprecated:` text and the JSON schema of the
// subtree as the decoder reads it (the Go type, by reflection). oracles/schemas/produce.py
// runs it once per Talos minor, in a copy of oracles/talos/<minor>/go.mod, and writes
// schemas/talos/<minor>/deprecated.json from its output.
//
// Usage: decoded DIR  (DIR: config/types/v1alpha1 of the machinery module)
package main

import (
	"encoding"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"reflect"
	"sort"
	"strings"
	"time"

	"github.com/siderolabs/talos/pkg/machinery/config/types/v1alpha1"
	yaml "go.yaml.in/yaml/v4"
)

type fieldDoc struct {
	nodoc      bool
	deprecated string
}

type entry struct {
	Path       string `json:"path"`
	GoType     string `json:"go_type"`
	Deprecated string `json:"deprecated"`
	// Within is the nodoc field this one is inside of ("" for a top one, which has a schema).
	Within string `json:"within,omitempty"`
	Schema any    `json:"schema,omitempty"`
}

var (
	docs    = map[string]map[string]fieldDoc{}
	entries []entry
	unm     = reflect.TypeOf((*yaml.Unmarshaler)(nil)).Elem()
	obsUnm  = reflect.TypeOf((*yaml.Unmarshaler)(nil)).Elem()
	textUnm = reflect.TypeOf((*encoding.TextUnmarshaler)(nil)).Elem()
	durType = reflect.TypeOf(time.Duration(0))
)

type obsoleteUnmarshaler interface {
	UnmarshalYAML(unmarshal func(any) error) error
}

func init() {
	obsUnm = reflect.TypeOf((*obsoleteUnmarshaler)(nil)).Elem()
}

func readDocs(dir string) {
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, dir, func(fi os.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, parser.ParseComments)
	if err != nil {
		panic(err)
	}
	for _, p := range pkgs {
		for _, f := range p.Files {
			ast.Inspect(f, func(n ast.Node) bool {
				ts, ok := n.(*ast.TypeSpec)
				if !ok {
					return true
				}
				st, ok := ts.Type.(*ast.StructType)
				if !ok {
					return true
				}
				m := map[string]fieldDoc{}
				for _, fl := range st.Fields.List {
					if fl.Doc == nil {
						continue
					}
					text := fl.Doc.Text()
					d := fieldDoc{nodoc: strings.Contains(text, "docgen:nodoc")}
					if i := strings.Index(text, "Deprecated:"); i >= 0 {
						d.deprecated = strings.Join(strings.Fields(text[i+len("Deprecated:"):]), " ")
					}
					for _, name := range fl.Names {
						m[name.Name] = d
					}
				}
				docs[ts.Name.Name] = m
				return true
			})
		}
	}
}

func yamlName(f reflect.StructField) (name string, inline bool) {
	tag := f.Tag.Get("yaml")
	parts := strings.Split(tag, ",")
	for _, p := range parts[1:] {
		if p == "inline" {
			return "", true
		}
	}
	if parts[0] == "-" {
		return "-", false
	}
	if parts[0] == "" {
		return strings.ToLower(f.Name), false
	}
	return parts[0], false
}

func custom(t reflect.Type) bool {
	p := reflect.PointerTo(t)
	return p.Implements(unm) || p.Implements(obsUnm) || p.Implements(textUnm) || t.Implements(unm) || t.Implements(obsUnm)
}

// schema is the JSON schema of what the decoder takes into a value of type t.
func schema(t reflect.Type, stack map[reflect.Type]bool) any {
	if t == durType {
		return map[string]any{"type": []string{"string", "integer"}}
	}
	if custom(t) {
		return map[string]any{}
	}
	switch t.Kind() {
	case reflect.Pointer:
		return schema(t.Elem(), stack)
	case reflect.String:
		return map[string]any{"type": "string"}
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return map[string]any{"type": "integer"}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return map[string]any{"type": "integer", "minimum": 0}
	case reflect.Float32, reflect.Float64:
		return map[string]any{"type": "number"}
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return map[string]any{}
		}
		return map[string]any{"type": "array", "items": schema(t.Elem(), stack)}
	case reflect.Map:
		return map[string]any{"type": "object", "additionalProperties": schema(t.Elem(), stack)}
	case reflect.Struct:
		if stack[t] {
			return map[string]any{}
		}
		stack[t] = true
		defer delete(stack, t)
		props := map[string]any{}
		structProps(t, props, stack)
		return map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	}
	return map[string]any{}
}

func structProps(t reflect.Type, props map[string]any, stack map[reflect.Type]bool) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, inline := yamlName(f)
		if inline {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				structProps(ft, props, stack)
			}
			continue
		}
		if name == "-" {
			continue
		}
		props[name] = schema(f.Type, stack)
	}
}

// walk records the nodoc fields under struct type t at path.
func walk(t reflect.Type, path, within string, stack map[reflect.Type]bool) {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map || t.Kind() == reflect.Array {
		if t.Kind() != reflect.Pointer {
			path += "[]"
		}
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || custom(t) || stack[t] {
		return
	}
	stack[t] = true
	defer delete(stack, t)
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, inline := yamlName(f)
		if name == "-" {
			continue
		}
		p := path
		if !inline {
			p = strings.TrimPrefix(path+"."+name, ".")
		}
		d := docs[t.Name()][f.Name]
		switch {
		case d.nodoc && within == "":
			entries = append(entries, entry{Path: p, GoType: f.Type.String(), Deprecated: d.deprecated, Schema: schema(f.Type, map[reflect.Type]bool{})})
			walk(f.Type, p, p, stack)
		case d.nodoc || (within != "" && d.deprecated != ""):
			entries = append(entries, entry{Path: p, GoType: f.Type.String(), Deprecated: d.deprecated, Within: within})
			walk(f.Type, p, within, stack)
		default:
			walk(f.Type, p, within, stack)
		}
	}
}

func main() {
	readDocs(os.Args[1])
	walk(reflect.TypeOf(v1alpha1.Config{}), "", "", map[reflect.Type]bool{})
	sort.Slice(entries, func(i, j int) bool { return entries[i].Path < entries[j].Path })
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(entries); err != nil {
		panic(err)
	}
}
