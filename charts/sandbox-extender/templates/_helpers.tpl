{{/* Names ------------------------------------------------------------------------------------------ */}}

{{- define "sandbox-extender.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* The release's full name: the release name if it already contains the chart name. */}}
{{- define "sandbox-extender.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "sandbox-extender.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "sandbox-extender.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* scheduler (kube-scheduler + extender sidecar) or extender (the extender alone). */}}
{{- define "sandbox-extender.component" -}}
{{- if eq .Values.mode "scheduler" -}}scheduler{{- else -}}extender{{- end -}}
{{- end -}}

{{/* Labels ----------------------------------------------------------------------------------------- */}}

{{- define "sandbox-extender.selectorLabels" -}}
app.kubernetes.io/name: {{ include "sandbox-extender.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "sandbox-extender.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "sandbox-extender.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: sandbox-extender
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/* Labels of the workload (pods, Services, PDB, ServiceMonitor): + app.kubernetes.io/component. */}}
{{- define "sandbox-extender.workloadLabels" -}}
{{ include "sandbox-extender.labels" . }}
app.kubernetes.io/component: {{ include "sandbox-extender.component" . }}
{{- end -}}

{{- define "sandbox-extender.workloadSelectorLabels" -}}
{{ include "sandbox-extender.selectorLabels" . }}
app.kubernetes.io/component: {{ include "sandbox-extender.component" . }}
{{- end -}}

{{/* Images ----------------------------------------------------------------------------------------- */}}

{{- define "sandbox-extender.extenderImage" -}}
{{- printf "%s:%s" .Values.extender.image.repository (default .Chart.AppVersion .Values.extender.image.tag) -}}
{{- end -}}

{{- define "sandbox-extender.schedulerImage" -}}
{{- printf "%s:%s" .Values.scheduler.image.repository .Values.scheduler.image.tag -}}
{{- end -}}

{{/* Network: host network, ports, the API server's address ---------------------------------------- */}}

{{/* The ports the pods listen on: in the node's network namespace (hostNetwork.enabled) the hostNetwork ports,
else the pod's own (scheduler.securePort, extender.port or extenderService.port, extender.gateway.port). */}}
{{- define "sandbox-extender.schedulerPort" -}}
{{- if .Values.hostNetwork.enabled -}}{{ int .Values.hostNetwork.schedulerSecurePort }}{{- else -}}{{ int .Values.scheduler.securePort }}{{- end -}}
{{- end -}}
{{- define "sandbox-extender.extenderPort" -}}
{{- if .Values.hostNetwork.enabled -}}{{ int .Values.hostNetwork.extenderPort }}
{{- else if eq .Values.mode "scheduler" -}}{{ int .Values.extender.port }}
{{- else -}}{{ int .Values.extenderService.port }}{{- end -}}
{{- end -}}
{{- define "sandbox-extender.gatewayPort" -}}
{{- if .Values.hostNetwork.enabled -}}{{ int .Values.hostNetwork.gatewayPort }}{{- else -}}{{ int .Values.extender.gateway.port }}{{- end -}}
{{- end -}}

{{/* Pod spec fields of the host network (nothing in a pod network). */}}
{{- define "sandbox-extender.podNetwork" -}}
{{- if .Values.hostNetwork.enabled -}}
hostNetwork: true
# Cluster DNS still first (ClusterFirst would mean the node's resolver in the host network).
dnsPolicy: ClusterFirstWithHostNet
{{- end -}}
{{- end -}}

{{/* The address kube-scheduler and the gateway listen on: every address of the pod, or in the host network only
the pod's IP (the node's address the kubelet probes and the Service's endpoints use), not every address of the
node. "$(POD_IP)" is expanded by the kubelet from the env of sandbox-extender.podIPEnv. */}}
{{- define "sandbox-extender.listenAddress" -}}
{{- if .Values.hostNetwork.enabled -}}$(POD_IP){{- else -}}0.0.0.0{{- end -}}
{{- end -}}
{{- define "sandbox-extender.podIPEnv" -}}
{{- if .Values.hostNetwork.enabled -}}
- name: POD_IP
  valueFrom:
    fieldRef: {fieldPath: status.podIP}
{{ end -}}
{{- end -}}

{{/* Deployment strategy: with host ports the old pod must go before the new one can start on the same node. */}}
{{- define "sandbox-extender.strategy" -}}
{{- if .Values.hostNetwork.enabled -}}
strategy:
  type: RollingUpdate
  rollingUpdate: {maxSurge: 0, maxUnavailable: 1}
{{- end -}}
{{- end -}}

{{/* Env of the containers that talk to the API server: apiServer as the in-cluster address (empty without it).
client-go's InClusterConfig and @kubernetes/client-node's loadFromCluster read these two variables, which a
container's own env overrides. */}}
{{- define "sandbox-extender.apiServerEnv" -}}
{{- if .Values.apiServer.host -}}
- name: KUBERNETES_SERVICE_HOST
  value: {{ .Values.apiServer.host | quote }}
- name: KUBERNETES_SERVICE_PORT
  value: {{ int .Values.apiServer.port | toString | quote }}
{{ end -}}
{{- end -}}

{{/* Extender mode: TLS ----------------------------------------------------------------------------- */}}

{{- define "sandbox-extender.serviceName" -}}
{{- include "sandbox-extender.fullname" . -}}
{{- end -}}

{{- define "sandbox-extender.serviceDNS" -}}
{{- printf "%s.%s.svc" (include "sandbox-extender.serviceName" .) .Release.Namespace -}}
{{- end -}}

{{/* The Secret holding tls.crt / tls.key: given, or the one cert-manager writes. */}}
{{- define "sandbox-extender.tlsSecretName" -}}
{{- if .Values.extenderService.tls.certManager.enabled -}}
{{- printf "%s-tls" (include "sandbox-extender.fullname" .) -}}
{{- else -}}
{{- .Values.extenderService.tls.secretName -}}
{{- end -}}
{{- end -}}

{{/* Mount points inside the extender container. */}}
{{- define "sandbox-extender.configDir" -}}/etc/sandbox-extender{{- end -}}
{{- define "sandbox-extender.tlsDir" -}}/etc/sandbox-extender/tls{{- end -}}
{{- define "sandbox-extender.clientCADir" -}}/etc/sandbox-extender/client-ca{{- end -}}

{{/* Checks that values.schema.json cannot express with a readable message. */}}
{{- define "sandbox-extender.validate" -}}
{{- if and (eq .Values.mode "scheduler") (gt (int .Values.replicas) 1) (not .Values.scheduler.leaderElection.enabled) -}}
{{- fail "replicas > 1 needs scheduler.leaderElection.enabled: two active kube-schedulers would each place pods through their own extender" -}}
{{- end -}}
{{- $kubeScheduler := default (dict) (dig "kubeScheduler" (dict) (default (dict) .Values.extender.config)) -}}
{{- if and (eq .Values.mode "scheduler") (hasKey $kubeScheduler "percentageOfNodesToScore") -}}
{{- fail "scheduler mode: the chart sets extender.config.kubeScheduler.percentageOfNodesToScore from scheduler.percentageOfNodesToScore (the profile it runs): set that instead" -}}
{{- end -}}
{{- $dims := default (list) .Values.extender.config.dimensions -}}
{{- if ne (len $dims) (len (uniq $dims)) -}}
{{- fail (printf "extender.config.dimensions must not repeat a resource: %v" $dims) -}}
{{- end -}}
{{- if .Values.hostNetwork.enabled -}}
{{- $ports := list (int .Values.hostNetwork.extenderPort) -}}
{{- if eq .Values.mode "scheduler" -}}
{{- $ports = list (int .Values.hostNetwork.schedulerSecurePort) (int .Values.hostNetwork.extenderPort) (int .Values.hostNetwork.gatewayPort) -}}
{{- end -}}
{{- if ne (len $ports) (len (uniq $ports)) -}}
{{- fail (printf "hostNetwork: the pods' ports share the node's, so schedulerSecurePort, extenderPort and gatewayPort must differ: %v" $ports) -}}
{{- end -}}
{{- end -}}
{{- if eq .Values.mode "extender" -}}
{{- if and .Values.extenderService.tls.certManager.enabled .Values.extenderService.tls.secretName -}}
{{- fail "extender mode: set extenderService.tls.secretName or extenderService.tls.certManager.enabled, not both" -}}
{{- end -}}
{{- if not (or .Values.extenderService.tls.certManager.enabled .Values.extenderService.tls.secretName) -}}
{{- fail "extender mode serves HTTPS: set extenderService.tls.secretName (a kubernetes.io/tls Secret) or extenderService.tls.certManager.enabled=true with an issuerRef" -}}
{{- end -}}
{{- if and .Values.extenderService.tls.certManager.enabled (not .Values.extenderService.tls.certManager.issuerRef.name) -}}
{{- fail "extenderService.tls.certManager.issuerRef.name is required with certManager.enabled" -}}
{{- end -}}
{{- if and .Values.schedulerExtender.bind (not .Values.extenderService.tls.clientCA.secretName) -}}
{{- fail "extender mode with schedulerExtender.bind needs client-certificate authentication: set extenderService.tls.clientCA.secretName, so only kube-scheduler can call the bind verb (or set schedulerExtender.bind=false)" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/*
The requeue object (a CSIStorageCapacity in the release namespace) and whether requeue is on
(extender.config.requeue.enabled, default true): "true" or "".
*/}}
{{- define "sandbox-extender.requeueObject" -}}
{{- printf "%s-requeue" (include "sandbox-extender.fullname" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- define "sandbox-extender.requeueEnabled" -}}
{{- if dig "requeue" "enabled" true (default (dict) .Values.extender.config) -}}true{{- end -}}
{{- end -}}

{{/*
The extender's config file: extender.config from the values, plus the keys the chart owns (schedulerName,
server.host/port/tls, requeue.namespace/name; in scheduler mode kubeScheduler.percentageOfNodesToScore, the profile's
scheduler.percentageOfNodesToScore). chooseInFilter defaults by mode: scheduler mode runs its profile without score plugins,
so Filter answers the chosen node alone (one call per pod); extender mode joins a kube-scheduler whose own
score plugins must still weigh in, so Filter answers every feasible node and Prioritize scores them.
Rendered as YAML; the extender validates it again at start-up.
*/}}
{{- define "sandbox-extender.extenderConfig" -}}
{{- $config := deepCopy (default (dict) .Values.extender.config) -}}
{{- if not (hasKey $config "chooseInFilter") -}}
{{- $_ := set $config "chooseInFilter" (eq .Values.mode "scheduler") -}}
{{- end -}}
{{- $owned := dict "schedulerName" .Values.schedulerName "requeue" (dict "namespace" .Release.Namespace "name" (include "sandbox-extender.requeueObject" .)) -}}
{{- if eq .Values.mode "scheduler" -}}
{{- $_ := set $owned "server" (dict "host" "127.0.0.1" "port" (int (include "sandbox-extender.extenderPort" .))) -}}
{{- $_ := set $owned "kubeScheduler" (dict "percentageOfNodesToScore" (int .Values.scheduler.percentageOfNodesToScore)) -}}
{{- else -}}
{{- $tls := dict "certFile" (printf "%s/tls.crt" (include "sandbox-extender.tlsDir" .)) "keyFile" (printf "%s/tls.key" (include "sandbox-extender.tlsDir" .)) -}}
{{- if .Values.extenderService.tls.clientCA.secretName -}}
{{- $_ := set $tls "clientCaFile" (printf "%s/%s" (include "sandbox-extender.clientCADir" .) .Values.extenderService.tls.clientCA.key) -}}
{{- end -}}
{{- $_ := set $owned "server" (dict "host" .Values.extenderService.listenHost "port" (int (include "sandbox-extender.extenderPort" .)) "tls" $tls) -}}
{{- end -}}
{{- toYaml (mustMergeOverwrite $config $owned) -}}
{{- end -}}

{{/*
The kube-scheduler extender block. Arguments: root (the chart context), urlPrefix, and for HTTPS tlsConfig
(a dict rendered as the block's tlsConfig).
*/}}
{{- define "sandbox-extender.extenderBlock" -}}
{{- $v := .root.Values.schedulerExtender -}}
- urlPrefix: {{ .urlPrefix | quote }}
  filterVerb: filter
  prioritizeVerb: prioritize
  {{- if $v.bind }}
  bindVerb: bind
  {{- end }}
  weight: {{ int $v.weight }}
  nodeCacheCapable: {{ $v.nodeCacheCapable }}
  httpTimeout: {{ $v.httpTimeout | quote }}
  ignorable: {{ $v.ignorable }}
  {{- with .tlsConfig }}
  enableHTTPS: true
  tlsConfig:
    {{- toYaml . | nindent 4 }}
  {{- end }}
{{- end -}}

{{/* The KubeSchedulerConfiguration of the scheduler mode. */}}
{{- define "sandbox-extender.schedulerConfig" -}}
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
# No kubeconfig: kube-scheduler uses the pod's ServiceAccount (in-cluster).
clientConnection:
  qps: {{ .Values.scheduler.clientConnection.qps }}
  burst: {{ int .Values.scheduler.clientConnection.burst }}
leaderElection:
  leaderElect: {{ .Values.scheduler.leaderElection.enabled }}
  resourceLock: leases
  # Its own lease, named after the scheduler: never kube-scheduler's.
  resourceName: {{ .Values.schedulerName }}
  resourceNamespace: {{ .Release.Namespace }}
  leaseDuration: {{ .Values.scheduler.leaderElection.leaseDuration }}
  renewDeadline: {{ .Values.scheduler.leaderElection.renewDeadline }}
  retryPeriod: {{ .Values.scheduler.leaderElection.retryPeriod }}
# 100: the extender sees every feasible node (docs/adr/0010-chart-keeps-every-node-offered.md).
percentageOfNodesToScore: {{ int .Values.scheduler.percentageOfNodesToScore }}
profiles:
  - schedulerName: {{ .Values.schedulerName }}
    # Score plugins off: the extender's prioritize alone ranks, so the node it reserved is the node bound.
    plugins:
      score:
        disabled:
          - name: "*"
# Extenders apply to every profile of this process, which has only the one above.
extenders:
{{ include "sandbox-extender.extenderBlock" (dict "root" . "urlPrefix" (printf "http://127.0.0.1:%s" (include "sandbox-extender.extenderPort" .))) }}
{{- end -}}

{{/* Alerting rules (prometheusrule.yaml) ----------------------------------------------------------- */}}

{{/* The label matchers of the extender's series: prometheusRule.extenderSelector, else what serviceMonitor
scrapes (job = the Service's name: <fullname>-metrics in scheduler mode, the HTTPS Service in extender mode). */}}
{{- define "sandbox-extender.alertExtenderSelector" -}}
{{- if .Values.prometheusRule.extenderSelector -}}
{{- .Values.prometheusRule.extenderSelector -}}
{{- else -}}
{{- $job := ternary (include "sandbox-extender.serviceName" .) (printf "%s-metrics" (include "sandbox-extender.fullname" .)) (eq .Values.mode "extender") -}}
{{- printf "job=%q,namespace=%q" $job .Release.Namespace -}}
{{- end -}}
{{- end -}}

{{/* The model-stale threshold: the alert's own value, else the extender's watch.maxBrokenSeconds (default 30). */}}
{{- define "sandbox-extender.alertMaxBrokenSeconds" -}}
{{- $watch := default (dict) .Values.extender.config.watch -}}
{{- $v := .Values.prometheusRule.alerts.modelStale.brokenSeconds -}}
{{- if and (not (kindIs "invalid" $v)) (ne (toString $v) "") -}}{{ $v }}{{- else -}}{{ default 30 $watch.maxBrokenSeconds }}{{- end -}}
{{- end -}}

{{/* Extra labels of every alert (prometheusRule.alertLabels), one "key: value" per line. */}}
{{- define "sandbox-extender.alertLabels" -}}
{{- $lines := list -}}
{{- range $k, $v := .Values.prometheusRule.alertLabels -}}
{{- $lines = append $lines (printf "%s: %s" $k (quote $v)) -}}
{{- end -}}
{{- join "\n" $lines -}}
{{- end -}}

{{/* A Go duration (5s, 500ms, 1m30s) in seconds, as a number. */}}
{{- define "sandbox-extender.durationSeconds" -}}
{{- $units := dict "h" 3600.0 "m" 60.0 "s" 1.0 "ms" 0.001 "us" 0.000001 "µs" 0.000001 "ns" 0.000000001 -}}
{{- $total := 0.0 -}}
{{- range regexFindAll "[0-9.]+(ns|us|µs|ms|s|m|h)" . -1 -}}
{{- $unit := regexReplaceAll "^[0-9.]+" . "" -}}
{{- $total = addf $total (mulf (float64 (regexReplaceAll "[a-zµ]+$" . "")) (get $units $unit)) -}}
{{- end -}}
{{- $total -}}
{{- end -}}
