package main

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"connectrpc.com/connect"
	"connectrpc.com/vanguard"
	"google.golang.org/genproto/googleapis/api/annotations"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// requestReadTimeout is how long a client has to send a request's body, once its headers are
// in (ReadHeaderTimeout bounds those). A request of hearts.v1 is one small message.
const requestReadTimeout = 15 * time.Second

// withReadDeadline gives each request timeout to arrive whole: reading its body fails after
// that, which ends the call. Without a deadline a client that announces a body and never sends
// it would hold the call, and its goroutines, for as long as it kept the connection open.
//
// The deadline bounds the request only: once the body has been read, net/http lifts it (HTTP/1.1)
// or it has nothing left to end (HTTP/2, where it is the stream's), so a response stream
// (WatchTable) lasts as long as it needs to; TestStreamsOutliveTheReadDeadline checks both.
// Every method of hearts.v1 takes a single request message; a client-streaming method would
// need an exception here.
func withReadDeadline(timeout time.Duration, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// A request without a body (a REST GET or DELETE) has nothing to wait for, and on
		// HTTP/1.1 net/http is already reading the connection in the background for it: a
		// deadline there would end the call, and the connection, while the backend answers.
		if r.Body != nil && r.Body != http.NoBody {
			// An error means no deadlines (not net/http's server: a test's recorder).
			_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(timeout))
		}
		next.ServeHTTP(w, r)
	})
}

// requestJSONCodec is vanguard's JSON codec, except that a request that is not valid JSON for
// its message is INVALID_ARGUMENT / INVALID_REQUEST, the server's answer to a request that does
// not parse, rather than UNKNOWN (HTTP 500) without details. The transcoder decodes only
// requests with it (responses come from the backend in binary), so every error here is the
// client's.
type requestJSONCodec struct {
	*vanguard.JSONCodec
}

func newRequestJSONCodec(resolver vanguard.TypeResolver) vanguard.Codec {
	return requestJSONCodec{vanguard.NewJSONCodec(resolver)}
}

func (c requestJSONCodec) Unmarshal(data []byte, msg proto.Message) error {
	if err := c.JSONCodec.Unmarshal(data, msg); err != nil {
		return malformedJSON(msg, err)
	}
	return nil
}

// UnmarshalField decodes a REST body that is one field of the request (CreateTable's table).
func (c requestJSONCodec) UnmarshalField(data []byte, msg proto.Message, field protoreflect.FieldDescriptor) error {
	if err := c.JSONCodec.UnmarshalField(data, msg, field); err != nil {
		return malformedJSON(msg, err)
	}
	return nil
}

func malformedJSON(msg proto.Message, err error) error {
	return invalidRequestError(fmt.Errorf("the request is not valid JSON for %s: %w", msg.ProtoReflect().Descriptor().FullName(), err))
}

// invalidRequestError is invalidRequest as the transcoder's handlers return it.
func invalidRequestError(err error) *connect.Error {
	connectErr := connect.NewError(connect.CodeInvalidArgument, err)
	if detail, detailErr := connect.NewErrorDetail(&errdetails.ErrorInfo{Reason: "INVALID_REQUEST", Domain: errorDomain}); detailErr == nil {
		connectErr.AddDetail(detail)
	}
	return connectErr
}

// restRoute is one google.api.http rule of the service: what the gateway needs of it to check
// a REST request's query parameters before the transcoder reads them.
type restRoute struct {
	httpMethod string
	// segments is the path template, one entry a segment: a literal, "*" (any one segment) or
	// "**" (the rest of the path).
	segments []string
	verb     string
	request  protoreflect.MessageDescriptor
	// bound holds the field paths the path sets.
	bound [][]protoreflect.FieldDescriptor
	// body is "" (no body), "*" (the whole request) or the field the body is.
	body string
}

// restRoutes reads the google.api.http rules of every method of the service.
func restRoutes(service protoreflect.ServiceDescriptor) ([]*restRoute, error) {
	var routes []*restRoute
	methods := service.Methods()
	for i := range methods.Len() {
		method := methods.Get(i)
		rule, _ := proto.GetExtension(method.Options(), annotations.E_Http).(*annotations.HttpRule)
		if rule == nil {
			continue
		}
		for _, r := range append([]*annotations.HttpRule{rule}, rule.GetAdditionalBindings()...) {
			route, err := newRESTRoute(r, method.Input())
			if err != nil {
				return nil, fmt.Errorf("%s: %w", method.FullName(), err)
			}
			routes = append(routes, route)
		}
	}
	return routes, nil
}

func newRESTRoute(rule *annotations.HttpRule, request protoreflect.MessageDescriptor) (*restRoute, error) {
	route := &restRoute{request: request, body: rule.GetBody()}
	var template string
	switch pattern := rule.GetPattern().(type) {
	case *annotations.HttpRule_Get:
		route.httpMethod, template = http.MethodGet, pattern.Get
	case *annotations.HttpRule_Put:
		route.httpMethod, template = http.MethodPut, pattern.Put
	case *annotations.HttpRule_Post:
		route.httpMethod, template = http.MethodPost, pattern.Post
	case *annotations.HttpRule_Delete:
		route.httpMethod, template = http.MethodDelete, pattern.Delete
	case *annotations.HttpRule_Patch:
		route.httpMethod, template = http.MethodPatch, pattern.Patch
	case *annotations.HttpRule_Custom:
		route.httpMethod, template = pattern.Custom.GetKind(), pattern.Custom.GetPath()
	default:
		return nil, fmt.Errorf("a google.api.http rule without a pattern")
	}
	if !strings.HasPrefix(template, "/") {
		return nil, fmt.Errorf("path template %q does not start with /", template)
	}
	rest := template[1:]
	// The verb follows the last ':' that is not within a variable.
	if i := strings.LastIndexByte(rest, ':'); i > strings.LastIndexByte(rest, '}') {
		rest, route.verb = rest[:i], rest[i+1:]
	}
	for rest != "" {
		if rest[0] == '{' {
			end := strings.IndexByte(rest, '}')
			if end < 0 {
				return nil, fmt.Errorf("path template %q: unclosed {", template)
			}
			variable, pattern, found := strings.Cut(rest[1:end], "=")
			if !found {
				pattern = "*"
			}
			fields, err := resolveFieldPath(request, variable)
			if err != nil {
				return nil, fmt.Errorf("path template %q: %w", template, err)
			}
			route.bound = append(route.bound, fields)
			route.segments = append(route.segments, strings.Split(pattern, "/")...)
			rest = rest[end+1:]
		} else {
			end := strings.IndexByte(rest, '/')
			if end < 0 {
				end = len(rest)
			}
			route.segments = append(route.segments, rest[:end])
			rest = rest[end:]
		}
		rest = strings.TrimPrefix(rest, "/")
	}
	return route, nil
}

// matches reports whether a request of method to path takes this route, as vanguard's router
// matches it: the verb follows the first ':' of the last segment.
func (route *restRoute) matches(method, path string) bool {
	if method != route.httpMethod || !strings.HasPrefix(path, "/") {
		return false
	}
	parts := strings.Split(path[1:], "/")
	var verb string
	if last, i := parts[len(parts)-1], strings.IndexByte(parts[len(parts)-1], ':'); i >= 0 {
		parts[len(parts)-1], verb = last[:i], last[i+1:]
	}
	if verb != route.verb {
		return false
	}
	for i, segment := range route.segments {
		if segment == "**" {
			return true
		}
		if i >= len(parts) || (segment != "*" && segment != parts[i]) {
			return false
		}
	}
	return len(parts) == len(route.segments)
}

// checkQuery refuses what the transcoder would take wrongly from a request's query: a
// parameter that names no field of the request (which the transcoder answers with UNKNOWN,
// HTTP 500), one that names a field the path or the body sets (which it would silently
// override: GET /v1/tables/A?name=tables/B read table B), a field given more than once that
// holds one value, and a value that does not parse as its field's type.
func (route *restRoute) checkQuery(query url.Values) error {
	for name, values := range query {
		fields, err := resolveFieldPath(route.request, name)
		if err != nil {
			return fmt.Errorf("query parameter %q: %w", name, err)
		}
		if route.body == "*" {
			return fmt.Errorf("query parameter %q: this call takes the whole request in its body", name)
		}
		if route.body != "" && string(fields[0].Name()) == route.body {
			return fmt.Errorf("query parameter %q: the body is the %s", name, route.body)
		}
		for _, bound := range route.bound {
			if isPrefix(bound, fields) || isPrefix(fields, bound) {
				return fmt.Errorf("query parameter %q: the path sets %s", name, fieldPathName(bound))
			}
		}
		leaf := fields[len(fields)-1]
		if leaf.IsMap() || (leaf.Kind() == protoreflect.MessageKind && !strings.HasPrefix(string(leaf.Message().FullName()), "google.protobuf.")) {
			return fmt.Errorf("query parameter %q: %s is not a scalar field", name, leaf.FullName())
		}
		if !leaf.IsList() && len(values) > 1 {
			return fmt.Errorf("query parameter %q: given %d times", name, len(values))
		}
		for _, value := range values {
			if err := checkParameterValue(leaf, value); err != nil {
				return fmt.Errorf("query parameter %q: %q is not a valid %s: %w", name, value, leaf.Kind(), err)
			}
		}
	}
	return nil
}

// resolveFieldPath finds the fields of a dotted path ("page_size", "pageSize", "table.name")
// in a message, by JSON name first and then proto name, as vanguard does.
func resolveFieldPath(message protoreflect.MessageDescriptor, path string) ([]protoreflect.FieldDescriptor, error) {
	var fields []protoreflect.FieldDescriptor
	for part := range strings.SplitSeq(path, ".") {
		if message == nil {
			return nil, fmt.Errorf("%s has no fields", fields[len(fields)-1].FullName())
		}
		field := message.Fields().ByJSONName(part)
		if field == nil {
			field = message.Fields().ByName(protoreflect.Name(part))
		}
		if field == nil {
			return nil, fmt.Errorf("%s has no field %q", message.FullName(), part)
		}
		fields = append(fields, field)
		message = nil
		if field.Kind() == protoreflect.MessageKind && !field.IsList() && !field.IsMap() {
			message = field.Message()
		}
	}
	return fields, nil
}

func isPrefix(prefix, fields []protoreflect.FieldDescriptor) bool {
	if len(prefix) > len(fields) {
		return false
	}
	for i := range prefix {
		if prefix[i] != fields[i] {
			return false
		}
	}
	return true
}

func fieldPathName(fields []protoreflect.FieldDescriptor) string {
	names := make([]string, len(fields))
	for i, field := range fields {
		names[i] = field.JSONName()
	}
	return strings.Join(names, ".")
}

// checkParameterValue parses a query parameter's value as vanguard does (numbers and booleans
// as JSON, enums by name or number, bytes as base64), for a scalar field. The well-known
// message types are left to vanguard.
func checkParameterValue(field protoreflect.FieldDescriptor, value string) error {
	data := []byte(value)
	var err error
	switch field.Kind() {
	case protoreflect.BoolKind:
		err = json.Unmarshal(data, new(bool))
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		err = json.Unmarshal(data, new(int32))
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		err = json.Unmarshal(data, new(int64))
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		err = json.Unmarshal(data, new(uint32))
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		err = json.Unmarshal(data, new(uint64))
	case protoreflect.FloatKind, protoreflect.DoubleKind:
		if value != "NaN" && value != "Infinity" && value != "-Infinity" {
			err = json.Unmarshal(data, new(float64))
		}
	case protoreflect.StringKind:
		if !utf8.ValidString(value) {
			err = errors.New("not UTF-8")
		}
	case protoreflect.BytesKind:
		encoding := base64.StdEncoding
		if strings.ContainsAny(value, "-_") {
			encoding = base64.URLEncoding
		}
		if len(value)%4 != 0 {
			encoding = encoding.WithPadding(base64.NoPadding)
		}
		_, err = encoding.DecodeString(value)
	case protoreflect.EnumKind:
		if json.Unmarshal(data, new(int32)) != nil && field.Enum().Values().ByName(protoreflect.Name(value)) == nil {
			err = fmt.Errorf("%s has no value %s", field.Enum().FullName(), value)
		}
	}
	return err
}

// withRESTChecks answers a REST request whose query the route cannot take, whose path is not
// UTF-8, or that has a body where its route takes none, with INVALID_ARGUMENT / INVALID_REQUEST (HTTP 400, the
// google.rpc.Status as JSON, as the transcoder writes errors), before the transcoder sees it.
func withRESTChecks(routes []*restRoute, logger *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for _, route := range routes {
			if !route.matches(r.Method, r.URL.Path) {
				continue
			}
			err := route.checkQuery(r.URL.Query())
			if err == nil && !utf8.ValidString(r.URL.Path) {
				// A path variable is a string field (a table's name), which must be UTF-8; the
				// literal parts of a route are ASCII.
				err = errors.New("the path is not UTF-8")
			}
			if err == nil && route.body == "" && r.ContentLength != 0 { // -1: chunked
				err = errors.New("this call takes no body: its fields go in the query")
			}
			if err != nil {
				logger.Info("refused a REST request", "method", r.Method, "path", r.URL.Path, "peer", r.RemoteAddr, "error", err)
				writeRESTError(w, status.Convert(invalidRequest(err.Error())))
				return
			}
			break
		}
		next.ServeHTTP(w, r)
	})
}

func writeRESTError(w http.ResponseWriter, st *status.Status) {
	data, err := protojson.Marshal(st.Proto())
	if err != nil {
		data = []byte(`{"code":13,"message":"cannot write the error"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest) // INVALID_ARGUMENT's
	_, _ = w.Write(data)
}
