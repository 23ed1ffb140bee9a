package release

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/ferryhq/ferry/internal/limits"
)

// UserDataFileMarker is a user_data value the client replaces with the
// contents of the release file's user data file (<release file>.userdata).
const UserDataFileMarker = "{{USER_DATA_FILE}}"

// The user data template variables.
const (
	VarReleaseID   = "RELEASE_ID"
	VarProjectName = "PROJECT_NAME"
	VarConfigName  = "CONFIG_NAME"
	VarServiceName = "SERVICE_NAME"
	// VarAssetURL and VarAssetSHA256 take an asset name:
	// {{ASSET_URL:name}}, {{ASSET_SHA256:name}}.
	VarAssetURL    = "ASSET_URL"
	VarAssetSHA256 = "ASSET_SHA256"
)

// Vars are the values user data templates may use.
type Vars struct {
	ReleaseID, ProjectName, ConfigName, ServiceName string
	// Assets maps an asset name to where the instances find it.
	Assets map[string]AssetRef
}

// AssetRef is a published asset as user data sees it.
type AssetRef struct {
	URL, SHA256 string
}

// variableRe matches a template variable: {{NAME}} or {{NAME:argument}}.
// Text that does not look like this (e.g. a Jinja "{{ v1.region }}") is left
// alone.
var variableRe = regexp.MustCompile(`\{\{([A-Z][A-Z0-9_]*)(?::([^{}\n]*))?\}\}`)

// RenderUserData replaces the variables {{RELEASE_ID}}, {{PROJECT_NAME}},
// {{CONFIG_NAME}}, {{SERVICE_NAME}}, {{ASSET_URL:name}} and
// {{ASSET_SHA256:name}} in tmpl with their values in v. An unknown variable,
// an unknown asset name or a result larger than limits.MaxUserDataBytes is
// an error naming it (a *failure.BadReleaseError with every problem, each
// "user_data: ..."). Rendering is pure: the same template and vars always
// give the same result.
func RenderUserData(tmpl string, v Vars) (string, error) {
	out, msgs := render(tmpl, v)
	if len(msgs) == 0 {
		return out, nil
	}
	p := &problems{}
	for _, m := range msgs {
		p.add("user_data", "%s", m)
	}
	return "", p.err()
}

// render renders tmpl and returns the problems as messages without a path.
func render(tmpl string, v Vars) (string, []string) {
	var msgs []string
	out := variableRe.ReplaceAllStringFunc(tmpl, func(m string) string {
		sub := variableRe.FindStringSubmatch(m)
		name, arg := sub[1], sub[2]
		hasArg := strings.Contains(m, ":")
		switch name {
		case VarReleaseID, VarProjectName, VarConfigName, VarServiceName:
			if hasArg {
				msgs = append(msgs, fmt.Sprintf("%s takes no argument", m))
				return m
			}
			return map[string]string{
				VarReleaseID: v.ReleaseID, VarProjectName: v.ProjectName,
				VarConfigName: v.ConfigName, VarServiceName: v.ServiceName,
			}[name]
		case VarAssetURL, VarAssetSHA256:
			ref, ok := v.Assets[arg]
			switch {
			case !hasArg || arg == "":
				msgs = append(msgs, fmt.Sprintf("%s needs an asset name, e.g. {{%s:app}}", m, name))
			case !ok:
				msgs = append(msgs, fmt.Sprintf("%s names unknown asset %q", m, arg))
			case name == VarAssetURL:
				return ref.URL
			default:
				return ref.SHA256
			}
			return m
		case "USER_DATA_FILE":
			msgs = append(msgs, fmt.Sprintf("%s must be the whole user_data, not part of it", m))
			return m
		}
		msgs = append(msgs, fmt.Sprintf("unknown variable %s", m))
		return m
	})
	if len(msgs) == 0 && len(out) > limits.MaxUserDataBytes {
		msgs = append(msgs, fmt.Sprintf("rendered user data is %d bytes, more than the EC2 limit of %d", len(out), limits.MaxUserDataBytes))
	}
	return out, msgs
}

// Variables lists the variables a user data template may use, for the
// schema and the documentation.
func Variables() []string {
	return []string{
		"{{" + VarReleaseID + "}}", "{{" + VarProjectName + "}}", "{{" + VarConfigName + "}}",
		"{{" + VarServiceName + "}}", "{{" + VarAssetURL + ":name}}", "{{" + VarAssetSHA256 + ":name}}",
	}
}
