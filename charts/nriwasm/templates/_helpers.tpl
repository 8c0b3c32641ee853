{{/* The chart's name, or nameOverride. */}}
{{- define "nriwasm.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The full name of every object: fullnameOverride, or release-chart (the
release name alone when it already contains the chart's name). */}}
{{- define "nriwasm.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := include "nriwasm.name" . }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "nriwasm.selectorLabels" -}}
app.kubernetes.io/name: {{ include "nriwasm.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "nriwasm.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "nriwasm.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "nriwasm.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "nriwasm.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- required "serviceAccount.name: name an existing ServiceAccount when serviceAccount.create is false" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "nriwasm.image" -}}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}
{{- end }}

{{/* "true" when the DRA parts are rendered: unless dra.enabled is false. An
unset dra.enabled lets the policy turn DRA on at run time, so the agent must
have what DRA needs. */}}
{{- define "nriwasm.dra" -}}
{{- if not (and (kindIs "bool" .Values.dra.enabled) (not .Values.dra.enabled)) }}true{{ end }}
{{- end }}

{{- define "nriwasm.isOCI" -}}
{{- if hasPrefix "oci://" .Values.policy.name }}true{{ end }}
{{- end }}

{{/* The DRA driver's name, as the agent derives it: "<policy>.<domain>",
where an OCI policy's name is the one in its metadata. */}}
{{- define "nriwasm.driverName" -}}
{{- $policy := .Values.policy.name }}
{{- if include "nriwasm.isOCI" . }}
{{- $policy = required "policy.metadataName: an OCI policy with DRA not off needs the policy's own name (nriwasm policy inspect shows it) for its driver name, RBAC and DeviceClasses" .Values.policy.metadataName }}
{{- end }}
{{- $driver := printf "%s.%s" $policy .Values.dra.domain }}
{{- if gt (len $driver) 63 }}
{{- fail (printf "dra.domain: the driver name %q is %d characters long, over the limit of 63" $driver (len $driver)) }}
{{- end }}
{{- $driver }}
{{- end }}

{{- define "nriwasm.configDir" -}}/etc/nriwasm{{- end }}
{{- define "nriwasm.keysDir" -}}/etc/nriwasm/keys{{- end }}

{{/* The agent's configuration file (host/config), as a dict. */}}
{{- define "nriwasm.configDict" -}}
{{- $v := .Values }}
{{- $policy := dict "name" $v.policy.name }}
{{- if $v.policy.config }}{{ $_ := set $policy "config" $v.policy.config }}{{ end }}
{{- /* One switch: dra.enabled=true also turns on the topology-aware policy's
own dra.enabled (without it the policy publishes no devices), unless the
policy's configuration says otherwise or is a string. */}}
{{- if and (eq (toString $v.dra.enabled) "true") (eq $v.policy.name "topology-aware") }}
{{- $pc := $v.policy.config | default dict }}
{{- if and (kindIs "map" $pc) (not (hasKey $pc "dra")) }}
{{- $_ := set $policy "config" (merge (dict "dra" (dict "enabled" true)) (deepCopy $pc)) }}
{{- end }}
{{- end }}
{{- if $v.policy.memoryLimit }}{{ $_ := set $policy "memoryLimit" $v.policy.memoryLimit }}{{ end }}
{{- if $v.policy.callTimeout }}{{ $_ := set $policy "callTimeout" $v.policy.callTimeout }}{{ end }}
{{- $nri := dict "socketPath" $v.nri.socketPath "pluginName" $v.nri.pluginName "pluginIndex" (printf "%02d" (int $v.nri.pluginIndex)) "onPolicyFailure" $v.nri.onPolicyFailure }}
{{- $cfg := dict "policy" $policy "nri" $nri "sysfs" $v.sysfs "stateDir" $v.stateDir "metrics" (dict "address" (printf ":%d" (int $v.metrics.port))) "log" (dict "verbosity" (int $v.log.verbosity)) }}
{{- $dra := dict "domain" $v.dra.domain }}
{{- if kindIs "bool" $v.dra.enabled }}{{ $_ := set $dra "enabled" $v.dra.enabled }}{{ end }}
{{- if include "nriwasm.dra" . }}
{{- $kubelet := trimSuffix "/" $v.dra.kubeletDir }}
{{- $_ := set $dra "registrarDir" (printf "%s/plugins_registry" $kubelet) }}
{{- $_ := set $dra "pluginDataDir" (printf "%s/plugins/%s" $kubelet (include "nriwasm.driverName" .)) }}
{{- $_ := set $dra "cdiDir" $v.dra.cdiDir }}
{{- end }}
{{- $_ := set $cfg "dra" $dra }}
{{- if $v.fleet.enabled }}{{ $_ := set $cfg "fleet" (dict "enabled" true) }}{{ end }}
{{- if include "nriwasm.isOCI" . }}
{{- $reg := dict "verification" $v.registry.verification }}
{{- if $v.registry.publicKeys }}
{{- $keys := list }}
{{- range $i, $_ := $v.registry.publicKeys }}{{ $keys = append $keys (printf "%s/key-%d.pub" (include "nriwasm.keysDir" $) $i) }}{{ end }}
{{- $_ := set $reg "publicKeys" $keys }}
{{- end }}
{{- if $v.registry.plainHTTP }}{{ $_ := set $reg "plainHTTP" $v.registry.plainHTTP }}{{ end }}
{{- if $v.registry.timeout }}{{ $_ := set $reg "timeout" $v.registry.timeout }}{{ end }}
{{- $_ := set $cfg "registry" $reg }}
{{- end }}
{{- toYaml $cfg }}
{{- end }}

{{/* A checksum of every field of the configuration a running agent cannot
change live: a change rolls the pods. policy.config is left out: the agent
applies it live from the ConfigMap. */}}
{{- define "nriwasm.restartChecksum" -}}
{{- $cfg := include "nriwasm.configDict" . | fromYaml }}
{{- $_ := unset $cfg.policy "config" }}
{{- toYaml $cfg | sha256sum }}
{{- end }}
