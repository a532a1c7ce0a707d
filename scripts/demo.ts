// `npm run demo`: the local TKE + operator + sample policy. Until the operator lands (issue: operator core),
// say so plainly and point at what already works, rather than pretending.
console.log(
  [
    'loopguard demo: not available yet.',
    'It lands with the operator core (LoopbackPolicy in Audit mode on the local TKE).',
    'What works today:',
    '  npm run cluster:up     # a real kube-apiserver + etcd on 127.0.0.1, prints export KUBECONFIG=…',
    '  npm run cluster:down   # stops it',
    '  npm test               # unit + integration tests on that control plane',
  ].join('\n'),
);
