{{/* The chart's name, and the name of everything it creates (loopguard for a release named loopguard). */}}
{{- define "loopguard.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "loopguard.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "loopguard.selectorLabels" -}}
app.kubernetes.io/name: {{ include "loopguard.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "loopguard.labels" -}}
{{ include "loopguard.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end }}

{{- define "loopguard.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "loopguard.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- required "serviceAccount.name: name the existing ServiceAccount when serviceAccount.create is false" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* The Lease the replicas elect a leader with; the leader-election Role allows only this name. */}}
{{- define "loopguard.leaseName" -}}
{{- default (printf "%s-leader" (include "loopguard.fullname" .)) .Values.operator.leaseName }}
{{- end }}

{{- define "loopguard.leaseNamespace" -}}
{{- default .Release.Namespace .Values.operator.leaseNamespace }}
{{- end }}

{{- define "loopguard.image" -}}
{{- $tag := default .Chart.AppVersion .Values.image.tag | toString }}
{{- if .Values.image.digest }}
{{- if .Values.image.tag }}
{{- printf "%s:%s@%s" .Values.image.repository $tag .Values.image.digest }}
{{- else }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- end }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository $tag }}
{{- end }}
{{- end }}

{{/*
The operator's flags: --probe-port always (it is the container port), --metrics-secure always (the operator's
default depends on where it runs) with --metrics-port when secure, the others only when set, so that the
operator's own defaults apply otherwise. --leader-election-id only when the Lease is not the operator's default name.
*/}}
{{- define "loopguard.args" -}}
{{- $o := .Values.operator }}
{{- $args := list (printf "--probe-port=%v" (int $o.probePort)) }}
{{- if .Values.metrics.secure }}{{ $args = append $args (printf "--metrics-port=%v" (int $o.metricsPort)) }}{{ end }}
{{- $args = append $args (printf "--metrics-secure=%v" (ternary "true" "false" (eq (toString .Values.metrics.secure) "true"))) }}
{{- if and .Values.metrics.secure .Values.metrics.certSecret }}{{ $args = append $args "--metrics-cert-dir=/etc/loopguard/metrics-certs" }}{{ end }}
{{- if not $o.leaderElect }}{{ $args = append $args "--leader-elect=false" }}{{ end }}
{{- if ne (include "loopguard.leaseName" .) "loopguard-leader" }}{{ $args = append $args (printf "--leader-election-id=%s" (include "loopguard.leaseName" .)) }}{{ end }}
{{- if $o.leaseNamespace }}{{ $args = append $args (printf "--lease-namespace=%s" $o.leaseNamespace) }}{{ end }}
{{- if $o.probeHost }}{{ $args = append $args (printf "--probe-host=%s" $o.probeHost) }}{{ end }}
{{- if $o.clbEndpoint }}{{ $args = append $args (printf "--clb-endpoint=%s" $o.clbEndpoint) }}{{ end }}
{{- if $o.clbProtocol }}{{ $args = append $args (printf "--clb-protocol=%s" $o.clbProtocol) }}{{ end }}
{{- if not (kindIs "invalid" $o.cloudRateLimit) }}{{ $args = append $args (printf "--cloud-rate-limit=%v" (int $o.cloudRateLimit)) }}{{ end }}
{{- if not (kindIs "invalid" $o.cloudRateAdaptive) }}{{ $args = append $args (printf "--cloud-rate-adaptive=%v" $o.cloudRateAdaptive) }}{{ end }}
{{- if not (kindIs "invalid" $o.concurrency) }}{{ $args = append $args (printf "--concurrency=%v" (int $o.concurrency)) }}{{ end }}
{{- if $o.driftCheckInterval }}{{ $args = append $args (printf "--drift-check-interval=%s" $o.driftCheckInterval) }}{{ end }}
{{- if not (kindIs "invalid" $o.observationCheckpoint) }}{{ $args = append $args (printf "--observation-checkpoint=%v" $o.observationCheckpoint) }}{{ end }}
{{- if not (kindIs "invalid" $o.driftFullReadShare) }}{{ $args = append $args (printf "--drift-full-read-share=%v" (int $o.driftFullReadShare)) }}{{ end }}
{{- if $o.tkeGracePeriod }}{{ $args = append $args (printf "--tke-grace-period=%s" $o.tkeGracePeriod) }}{{ end }}
{{- if $o.probeWindow }}{{ $args = append $args (printf "--probe-window=%s" $o.probeWindow) }}{{ end }}
{{- if $o.envoyGatewayNamespace }}{{ $args = append $args (printf "--envoy-gateway-namespace=%s" $o.envoyGatewayNamespace) }}{{ end }}
{{- if $o.dnsUpstream }}{{ $args = append $args (printf "--dns-upstream=%s" $o.dnsUpstream) }}{{ end }}
{{- if $o.corednsServers }}{{ $args = append $args (printf "--coredns-servers=%s" $o.corednsServers) }}{{ end }}
{{- if $o.dnsCheckWait }}{{ $args = append $args (printf "--dns-check-wait=%s" $o.dnsCheckWait) }}{{ end }}
{{- if $o.clusterDomain }}{{ $args = append $args (printf "--cluster-domain=%s" $o.clusterDomain) }}{{ end }}
{{- if $o.kubeProxyMode }}{{ $args = append $args (printf "--kube-proxy-mode=%s" $o.kubeProxyMode) }}{{ end }}
{{- if $o.kubeProxyVersion }}{{ $args = append $args (printf "--kube-proxy-version=%s" $o.kubeProxyVersion) }}{{ end }}
{{- if not (kindIs "invalid" $o.kubeProxyPreventLoopback) }}{{ if ne (toString $o.kubeProxyPreventLoopback) "" }}{{ $args = append $args (printf "--kube-proxy-prevent-loopback=%v" $o.kubeProxyPreventLoopback) }}{{ end }}{{ end }}
{{- if $o.logLevel }}{{ $args = append $args (printf "--log-level=%s" $o.logLevel) }}{{ end }}
{{- if $o.shutdownGrace }}{{ $args = append $args (printf "--shutdown-grace=%s" $o.shutdownGrace) }}{{ end }}
{{- range .Values.extraArgs }}{{ $args = append $args (toString .) }}{{ end }}
{{- toJson $args }}
{{- end }}
