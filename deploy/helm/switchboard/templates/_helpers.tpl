{{/* The chart's name, or nameOverride. */}}
{{- define "switchboard.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/*
The full name of this release's objects: fullnameOverride, else
<release>-<chart name> (just <release> when it already contains the name).
*/}}
{{- define "switchboard.fullname" -}}
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

{{- define "switchboard.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Labels that pick this release's pods: never change them after install. */}}
{{- define "switchboard.selectorLabels" -}}
app.kubernetes.io/name: {{ include "switchboard.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{/* Every object's labels. */}}
{{- define "switchboard.labels" -}}
helm.sh/chart: {{ include "switchboard.chart" . }}
{{ include "switchboard.selectorLabels" . }}
app.kubernetes.io/version: {{ .Values.image.tag | default .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: switchboard
{{- end -}}

{{- define "switchboard.image" -}}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) -}}
{{- end -}}

{{/* The Secret holding the credentials. */}}
{{- define "switchboard.secretName" -}}
{{- default (include "switchboard.fullname" .) .Values.existingSecret -}}
{{- end -}}

{{/*
The public address Telegram posts to in webhook mode: config.telegram.webhookURL,
else derived from the Ingress host.
*/}}
{{- define "switchboard.telegramWebhookURL" -}}
{{- if .Values.config.telegram.webhookURL -}}
{{- .Values.config.telegram.webhookURL -}}
{{- else if and .Values.ingress.enabled .Values.ingress.host -}}
{{- printf "https://%s/webhooks/telegram" .Values.ingress.host -}}
{{- end -}}
{{- end -}}
