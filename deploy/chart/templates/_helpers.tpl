{{/* Names and labels, the usual Helm way: the release's full name, truncated to 63 characters. */}}
{{- define "hypergov.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "hypergov.fullname" -}}
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

{{- define "hypergov.selectorLabels" -}}
app.kubernetes.io/name: {{ include "hypergov.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: reconciler
{{- end }}

{{- define "hypergov.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "hypergov.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "hypergov.serviceAccountName" -}}
{{- default (include "hypergov.fullname" .) .Values.serviceAccount.name }}
{{- end }}

{{- define "hypergov.secretName" -}}
{{- default (include "hypergov.fullname" .) .Values.secret.name }}
{{- end }}

{{/*
What values.schema.json cannot say (it checks each value alone): combinations that would give a
reconciler that cannot work. Each message says what to set.
*/}}
{{- define "hypergov.checked" -}}
{{- if not .Values.repository.url }}
{{- fail "repository.url is required: the governance repository the reconciler follows (https://... or ssh://...)" }}
{{- end }}
{{- if and (eq .Values.mode "replicas") (not .Values.state.backend) }}
{{- fail "mode replicas needs state.backend (s3://bucket/prefix): the replicas share each pass through leases in the state bucket" }}
{{- end }}
{{- if and (eq .Values.aws.identity "irsa") (not .Values.aws.roleArn) }}
{{- fail "aws.identity irsa needs aws.roleArn (the IAM role the ServiceAccount assumes)" }}
{{- end }}
{{- if and (ne .Values.aws.identity "irsa") .Values.aws.roleArn }}
{{- fail (printf "aws.roleArn is only used with aws.identity irsa (identity is %s: with pod-identity the role is bound by an EKS Pod Identity association)" .Values.aws.identity) }}
{{- end }}
{{- if and (not .Values.state.volume.enabled) (not .Values.state.backend) }}
{{- fail "state.volume.enabled false needs state.backend: without a bucket the terraform state would live on an emptyDir and die with the pod" }}
{{- end }}
{{- if and (eq .Values.mode "replicas") .Values.state.volume.existingClaim }}
{{- fail "state.volume.existingClaim is for mode single: each replica gets its own volume" }}
{{- end }}
{{- if and .Values.webhook.ingress.enabled (not .Values.webhook.enabled) }}
{{- fail "webhook.ingress.enabled needs webhook.enabled" }}
{{- end }}
{{- if and .Values.webhook.ingress.enabled (not .Values.webhook.ingress.host) }}
{{- fail "webhook.ingress.enabled needs webhook.ingress.host" }}
{{- end }}
{{- if and .Values.secret.create (eq .Values.git.protocol "https") (not .Values.secret.gitCredentials) }}
{{- fail "secret.create with git.protocol https needs secret.gitCredentials (https://user:token@host lines)" }}
{{- end }}
{{- if and .Values.secret.create (eq .Values.git.protocol "ssh") (not (and .Values.secret.sshPrivateKey .Values.secret.knownHosts)) }}
{{- fail "secret.create with git.protocol ssh needs secret.sshPrivateKey and secret.knownHosts" }}
{{- end }}
{{- if and .Values.secret.create .Values.audit.signingKeyFromSecret (not .Values.secret.auditSigningKey) }}
{{- fail "secret.create with audit.signingKeyFromSecret needs secret.auditSigningKey (ssh-keygen -t ed25519 -N '' -f FILE; --set-file)" }}
{{- end }}
{{- if and .Values.secret.create .Values.webhook.enabled (not .Values.secret.webhookSecret) }}
{{- fail "secret.create with webhook.enabled needs secret.webhookSecret (e.g. openssl rand -hex 32)" }}
{{- end }}
{{- if eq (int .Values.metrics.port) (int .Values.webhook.port) }}
{{- fail "metrics.port and webhook.port must differ" }}
{{- end }}
{{- end }}

{{/* The reconciler's command line after the image's ENTRYPOINT (hypergov). */}}
{{- define "hypergov.args" -}}
- reconcile
- {{ printf "--repo=%s" .Values.repository.url | quote }}
- {{ printf "--branch=%s" .Values.repository.branch | quote }}
- {{ printf "--watch=%v" .Values.reconciler.watch | quote }}
- {{ printf "--max-backoff=%v" .Values.reconciler.maxBackoff | quote }}
- {{ printf "--metrics-port=%v" .Values.metrics.port | quote }}
- {{ printf "--metrics-host=%s" .Values.metrics.host | quote }}
{{- if .Values.webhook.enabled }}
- {{ printf "--webhook-port=%v" .Values.webhook.port | quote }}
- {{ printf "--webhook-host=%s" .Values.webhook.host | quote }}
{{- end }}
- {{ printf "--log-format=%s" .Values.reconciler.logFormat | quote }}
{{- with .Values.reconciler.drift }}
{{- if .every }}
- {{ printf "--drift-every=%s" .every | quote }}
{{- if .remediate }}
- --remediate-drift
{{- end }}
{{- if .report }}
- {{ printf "--drift-report=%s" .report | quote }}
{{- end }}
{{- end }}
{{- end }}
{{- range .Values.reconciler.extraArgs }}
- {{ . | quote }}
{{- end }}
{{- end }}

{{/*
The pod template both modes run: the Deployment's (single) and the StatefulSet's (replicas) differ
only in where the state volume comes from.
*/}}
{{- define "hypergov.podTemplate" -}}
metadata:
  labels:
    {{- include "hypergov.selectorLabels" . | nindent 4 }}
    {{- with .Values.podLabels }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
  annotations:
    # A settings change rolls the pods (they read hypergov.yaml once, at start).
    checksum/settings: {{ toYaml .Values.settings | sha256sum }}
    {{- with .Values.podAnnotations }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
spec:
  serviceAccountName: {{ include "hypergov.serviceAccountName" . }}
  automountServiceAccountToken: {{ .Values.serviceAccount.automountToken }}
  # SIGTERM lets the stacks being applied finish and records them (exit 0).
  terminationGracePeriodSeconds: {{ .Values.terminationGracePeriodSeconds }}
  {{- with .Values.imagePullSecrets }}
  imagePullSecrets:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  # The image's user (deploy/Dockerfile: uid 10001); fsGroup makes the volumes and the Secret's
  # files readable by it.
  securityContext:
    runAsNonRoot: true
    runAsUser: 10001
    runAsGroup: 10001
    fsGroup: 10001
    seccompProfile:
      type: RuntimeDefault
  containers:
    - name: reconciler
      image: {{ printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) | quote }}
      imagePullPolicy: {{ .Values.image.pullPolicy }}
      args:
        {{- include "hypergov.args" . | nindent 8 }}
      env:
        - name: HYPERGOV_STATE_DIR
          value: /var/lib/hypergov/state
        - name: HYPERGOV_CONFIG_DIR
          value: {{ .Values.repository.configDir | quote }}
        {{- if .Values.state.backend }}
        - name: HYPERGOV_STATE_BACKEND
          value: {{ .Values.state.backend | quote }}
        {{- end }}
        {{- if .Values.settings }}
        - name: HYPERGOV_SETTINGS
          value: /etc/hypergov/settings/hypergov.yaml
        {{- end }}
        - name: AWS_REGION
          value: {{ .Values.aws.region | quote }}
        # The root filesystem is read-only: whatever writes to $HOME writes to /tmp; terraform
        # does not phone home for version checks.
        - name: HOME
          value: /tmp
        - name: CHECKPOINT_DISABLE
          value: "1"
        {{- if .Values.webhook.enabled }}
        - name: HYPERGOV_WEBHOOK_SECRET
          valueFrom:
            secretKeyRef:
              name: {{ include "hypergov.secretName" . }}
              key: webhook-secret
        {{- end }}
        {{- if .Values.audit.signingKeyFromSecret }}
        - name: HYPERGOV_AUDIT_SIGNING_KEY
          value: /etc/hypergov/git/audit-signing-key
        {{- end }}
        {{- if eq .Values.git.protocol "https" }}
        # git reads its credentials from the mounted store (git-credential-store), never argv.
        - name: GIT_CONFIG_COUNT
          value: "1"
        - name: GIT_CONFIG_KEY_0
          value: credential.helper
        - name: GIT_CONFIG_VALUE_0
          value: store --file=/etc/hypergov/git/git-credentials
        {{- else }}
        - name: GIT_SSH_COMMAND
          value: ssh -i /etc/hypergov/git/ssh-privatekey -o IdentitiesOnly=yes -o UserKnownHostsFile=/etc/hypergov/git/known_hosts -o StrictHostKeyChecking=yes
        {{- end }}
        {{- with .Values.extraEnv }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      ports:
        - name: metrics
          containerPort: {{ .Values.metrics.port }}
          protocol: TCP
        {{- if .Values.webhook.enabled }}
        - name: webhook
          containerPort: {{ .Values.webhook.port }}
          protocol: TCP
        {{- end }}
      livenessProbe:
        httpGet:
          path: /healthz
          port: metrics
        periodSeconds: 20
        failureThreshold: 3
      # Not ready after a permanent failure of the last pass or drift scan (the reason is the body
      # of /readyz): an alert to look, not a reason to restart.
      readinessProbe:
        httpGet:
          path: /readyz
          port: metrics
        periodSeconds: 15
      {{- with .Values.resources }}
      resources:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      securityContext:
        allowPrivilegeEscalation: false
        readOnlyRootFilesystem: true
        capabilities:
          drop: [ALL]
      volumeMounts:
        - name: state
          mountPath: /var/lib/hypergov
        - name: git
          mountPath: /etc/hypergov/git
          readOnly: true
        {{- if .Values.settings }}
        - name: settings
          mountPath: /etc/hypergov/settings
          readOnly: true
        {{- end }}
        - name: tmp
          mountPath: /tmp
  volumes:
    {{- if eq .Values.mode "single" }}
    {{- if .Values.state.volume.enabled }}
    - name: state
      persistentVolumeClaim:
        claimName: {{ default (printf "%s-state" (include "hypergov.fullname" .)) .Values.state.volume.existingClaim }}
    {{- else }}
    - name: state
      emptyDir: {}
    {{- end }}
    {{- else if not .Values.state.volume.enabled }}
    - name: state
      emptyDir: {}
    {{- end }}
    # Owned by root, group fsGroup, mode 0440: the reconciler reads it through its group, and ssh
    # accepts a key it does not own.
    - name: git
      secret:
        secretName: {{ include "hypergov.secretName" . }}
        defaultMode: 288   # 0440
        items:
          {{- if eq .Values.git.protocol "https" }}
          - key: git-credentials
            path: git-credentials
          {{- else }}
          - key: ssh-privatekey
            path: ssh-privatekey
          - key: known_hosts
            path: known_hosts
          {{- end }}
          {{- if .Values.audit.signingKeyFromSecret }}
          - key: audit-signing-key
            path: audit-signing-key
          {{- end }}
    {{- if .Values.settings }}
    - name: settings
      configMap:
        name: {{ include "hypergov.fullname" . }}-settings
    {{- end }}
    - name: tmp
      emptyDir: {}
  {{- with .Values.nodeSelector }}
  nodeSelector:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with .Values.tolerations }}
  tolerations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with .Values.affinity }}
  affinity:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- if eq .Values.mode "replicas" }}
  # Spread over nodes: replicas on one node share its cores and die with it.
  topologySpreadConstraints:
    - maxSkew: 1
      topologyKey: kubernetes.io/hostname
      whenUnsatisfiable: ScheduleAnyway
      labelSelector:
        matchLabels:
          {{- include "hypergov.selectorLabels" . | nindent 10 }}
  {{- end }}
{{- end }}
