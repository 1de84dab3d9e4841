//! The ClusterServiceVersion as operator-controller's bundle source reads it
//! (`rukpak/bundle/source/source.go :: fsBundleSource.GetBundle`:
//! `runtime.DefaultUnstructuredConverter.FromUnstructured` into operator-framework/api v0.45's
//! `v1alpha1.ClusterServiceVersion`), for the parts the renderer reads or copies: the metadata,
//! the install strategy (its deployments to the pod spec's containers, their ports, env and
//! mounts; permissions and their rules), the install modes, the owned CRDs and APIServices and
//! every field of the webhook definitions. A CSV whose values these types cannot hold is refused
//! as upstream refuses it; integers are what Go holds after reading them (see
//! [`super::unstructured`]). Other fields (the CSV's descriptive fields, `spec.version`, the pod
//! spec's volumes, probes, resources, affinity and security contexts) are not checked.

use serde_json::Value;

use super::unstructured::{STR, STR_MAP, STRS, Ty, convert};

const fn s(name: &'static str) -> Ty {
    Ty::Str(name)
}

static LABEL_SELECTOR_REQUIREMENT: Ty = Ty::Struct(&[
    ("key", STR),
    ("operator", s("v1.LabelSelectorOperator")),
    ("values", STRS),
]);
/// `metav1.LabelSelector`.
static LABEL_SELECTOR: Ty = Ty::Struct(&[
    ("matchLabels", STR_MAP),
    ("matchExpressions", Ty::List(&LABEL_SELECTOR_REQUIREMENT)),
]);

/// `metav1.ObjectMeta`, up to its annotations.
static OBJECT_META: Ty = Ty::Struct(&[
    ("name", STR),
    ("generateName", STR),
    ("namespace", STR),
    ("selfLink", STR),
    ("uid", s("types.UID")),
    ("resourceVersion", STR),
    ("generation", Ty::Int64),
    ("creationTimestamp", Ty::Any),
    ("deletionTimestamp", Ty::Any),
    ("deletionGracePeriodSeconds", Ty::Int64),
    ("labels", STR_MAP),
    ("annotations", STR_MAP),
    ("ownerReferences", Ty::Any),
    ("finalizers", STRS),
]);

/// `admissionregistrationv1.RuleWithOperations` (its `Rule` inline).
static RULE_WITH_OPERATIONS: Ty = Ty::Struct(&[
    ("operations", Ty::List(&s("v1.OperationType"))),
    ("apiGroups", STRS),
    ("apiVersions", STRS),
    ("resources", STRS),
    ("scope", s("v1.ScopeType")),
]);

/// `v1alpha1.WebhookDescription`.
static WEBHOOK: Ty = Ty::Struct(&[
    ("generateName", STR),
    ("type", s("v1alpha1.WebhookAdmissionType")),
    ("deploymentName", STR),
    ("containerPort", Ty::Int32),
    ("targetPort", Ty::IntOrString),
    ("rules", Ty::List(&RULE_WITH_OPERATIONS)),
    ("failurePolicy", s("v1.FailurePolicyType")),
    ("matchPolicy", s("v1.MatchPolicyType")),
    ("objectSelector", LABEL_SELECTOR),
    ("sideEffects", s("v1.SideEffectClass")),
    ("timeoutSeconds", Ty::Int32),
    ("admissionReviewVersions", STRS),
    ("reinvocationPolicy", s("v1.ReinvocationPolicyType")),
    ("webhookPath", STR),
    ("conversionCRDs", STRS),
]);

/// `rbacv1.PolicyRule`.
static POLICY_RULE: Ty = Ty::Struct(&[
    ("verbs", STRS),
    ("apiGroups", STRS),
    ("resources", STRS),
    ("resourceNames", STRS),
    ("nonResourceURLs", STRS),
]);
/// `v1alpha1.StrategyDeploymentPermissions`.
static PERMISSIONS: Ty = Ty::List(&Ty::Struct(&[
    ("serviceAccountName", STR),
    ("rules", Ty::List(&POLICY_RULE)),
]));

/// `corev1.Container`, up to its mounts.
static CONTAINER: Ty = Ty::Struct(&[
    ("name", STR),
    ("image", STR),
    ("command", STRS),
    ("args", STRS),
    ("workingDir", STR),
    (
        "ports",
        Ty::List(&Ty::Struct(&[
            ("name", STR),
            ("hostPort", Ty::Int32),
            ("containerPort", Ty::Int32),
            ("protocol", s("v1.Protocol")),
            ("hostIP", STR),
        ])),
    ),
    ("envFrom", Ty::Any),
    (
        "env",
        Ty::List(&Ty::Struct(&[
            ("name", STR),
            ("value", STR),
            ("valueFrom", Ty::Any),
        ])),
    ),
    ("resources", Ty::Any),
    ("resizePolicy", Ty::Any),
    ("restartPolicy", s("v1.ContainerRestartPolicy")),
    ("restartPolicyRules", Ty::Any),
    (
        "volumeMounts",
        Ty::List(&Ty::Struct(&[
            ("name", STR),
            ("readOnly", Ty::Bool),
            ("recursiveReadOnly", s("v1.RecursiveReadOnlyMode")),
            ("mountPath", STR),
            ("subPath", STR),
            ("mountPropagation", s("v1.MountPropagationMode")),
            ("subPathExpr", STR),
        ])),
    ),
]);
static CONTAINERS: Ty = Ty::List(&CONTAINER);

/// `corev1.PodSpec`, up to its service account.
static POD_SPEC: Ty = Ty::Struct(&[
    ("volumes", Ty::List(&Ty::Struct(&[("name", STR)]))),
    ("initContainers", CONTAINERS),
    ("containers", CONTAINERS),
    ("ephemeralContainers", Ty::Any),
    ("restartPolicy", s("v1.RestartPolicy")),
    ("terminationGracePeriodSeconds", Ty::Int64),
    ("activeDeadlineSeconds", Ty::Int64),
    ("dnsPolicy", s("v1.DNSPolicy")),
    ("nodeSelector", STR_MAP),
    ("serviceAccountName", STR),
    ("serviceAccount", STR),
]);

/// `appsv1.DeploymentSpec`.
static DEPLOYMENT_SPEC: Ty = Ty::Struct(&[
    ("replicas", Ty::Int32),
    ("selector", LABEL_SELECTOR),
    (
        "template",
        Ty::Struct(&[("metadata", OBJECT_META), ("spec", POD_SPEC)]),
    ),
    ("strategy", Ty::Any),
    ("minReadySeconds", Ty::Int32),
    ("revisionHistoryLimit", Ty::Int32),
    ("paused", Ty::Bool),
    ("progressDeadlineSeconds", Ty::Int32),
]);

/// `v1alpha1.NamedInstallStrategy`.
static INSTALL: Ty = Ty::Struct(&[
    ("strategy", STR),
    (
        "spec",
        Ty::Struct(&[
            (
                "deployments",
                Ty::List(&Ty::Struct(&[
                    ("name", STR),
                    ("spec", DEPLOYMENT_SPEC),
                    ("label", STR_MAP),
                ])),
            ),
            ("permissions", PERMISSIONS),
            ("clusterPermissions", PERMISSIONS),
        ]),
    ),
]);

/// `v1alpha1.CustomResourceDefinitions`, `APIServiceDefinitions`: the names the validators read.
static OWNED_REQUIRED: Ty = Ty::Struct(&[
    ("owned", Ty::List(&Ty::Struct(&[("name", STR)]))),
    ("required", Ty::List(&Ty::Struct(&[("name", STR)]))),
]);

/// `v1alpha1.ClusterServiceVersionSpec`.
static SPEC: Ty = Ty::Struct(&[
    ("install", INSTALL),
    ("version", Ty::Any),
    ("release", Ty::Any),
    ("maturity", STR),
    ("customresourcedefinitions", OWNED_REQUIRED),
    ("apiservicedefinitions", OWNED_REQUIRED),
    ("webhookdefinitions", Ty::List(&WEBHOOK)),
    ("nativeAPIs", Ty::Any),
    ("minKubeVersion", STR),
    ("displayName", STR),
    ("description", STR),
    ("keywords", STRS),
    ("maintainers", Ty::Any),
    ("provider", Ty::Any),
    ("links", Ty::Any),
    ("icon", Ty::Any),
    (
        "installModes",
        Ty::List(&Ty::Struct(&[
            ("type", s("v1alpha1.InstallModeType")),
            ("supported", Ty::Bool),
        ])),
    ),
]);

/// `v1alpha1.ClusterServiceVersion` (its `TypeMeta` read by the decoder before).
static CSV: Ty = Ty::Struct(&[("metadata", OBJECT_META), ("spec", SPEC)]);

/// Reads `csv` as the bundle source does: its integers replaced by what Go holds, or the
/// converter's message.
pub fn read(csv: &mut Value) -> Result<(), String> {
    convert(csv, &CSV)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn any_value() -> impl proptest::strategy::Strategy<Value = Value> {
        use proptest::prelude::*;
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            any::<u64>().prop_map(Value::from),
            any::<f64>()
                .prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
            "[a-z0-9]{0,4}".prop_map(Value::from),
        ];
        let keys = prop_oneof![
            Just("metadata"),
            Just("spec"),
            Just("install"),
            Just("webhookdefinitions"),
            Just("containerPort"),
            Just("targetPort"),
            Just("rules"),
            Just("deployments"),
            Just("template"),
            Just("containers"),
            Just("ports"),
            Just("installModes"),
            Just("annotations"),
        ];
        leaf.prop_recursive(6, 64, 4, move |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
                proptest::collection::btree_map(keys.clone(), inner, 0..4).prop_map(|m| {
                    Value::Object(m.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
                }),
            ]
        })
    }

    proptest::proptest! {
        /// Any value read as a CSV: a result, never a panic; read again, the same value (what
        /// Go holds reads as itself).
        #[test]
        fn reading_never_panics(v in any_value()) {
            let mut v = v;
            if read(&mut v).is_ok() {
                let once = v.clone();
                proptest::prop_assert!(read(&mut v).is_ok());
                proptest::prop_assert_eq!(v, once);
            }
        }
    }
}
