-- Argo CD health check for loopguard.dev/LoopbackPolicy and loopguard.dev/ClusterLoopbackPolicy. Both kinds write the
-- same kstatus conditions, so one script reads both (kstatus semantics, like Flux):
--   Degraded    Stalled=True: only a human can fix it (permission, capability ticket, misconfigured target)
--   Progressing status not written for the current generation yet, Reconciling=True, Ready not True, or deleting
--   Healthy     Ready=True (Enforce: Reconciled / ReconciledWithRisks; Audit: AuditComplete)
-- Install: see config/argocd/kustomization.yaml (argocd-cm keys resource.customizations.health.loopguard.dev_LoopbackPolicy
-- and resource.customizations.health.loopguard.dev_ClusterLoopbackPolicy).
local hs = { status = "Progressing", message = "Waiting for loopguard to evaluate the policy" }
if obj.metadata ~= nil and obj.metadata.deletionTimestamp ~= nil then
  hs.message = "Deleting: loopguard is restoring what it changed"
  return hs
end
if obj.status == nil then
  return hs
end
local generation = obj.metadata and obj.metadata.generation or nil
if obj.status.observedGeneration == nil or (generation ~= nil and obj.status.observedGeneration ~= generation) then
  hs.message = "Waiting for loopguard to evaluate the latest spec"
  return hs
end
local ready, stalled, reconciling = nil, nil, nil
if obj.status.conditions ~= nil then
  for _, c in ipairs(obj.status.conditions) do
    if c.type == "Ready" then ready = c end
    if c.type == "Stalled" then stalled = c end
    if c.type == "Reconciling" then reconciling = c end
  end
end
if stalled ~= nil and stalled.status == "True" then
  hs.status = "Degraded"
  hs.message = (stalled.reason or "Stalled") .. ": " .. (stalled.message or "")
  return hs
end
if reconciling ~= nil and reconciling.status == "True" then
  hs.message = reconciling.message or "Reconciling"
  return hs
end
if ready ~= nil and ready.status == "True" then
  hs.status = "Healthy"
  hs.message = ready.message or "Ready"
  return hs
end
if ready ~= nil and ready.message ~= nil then
  hs.message = ready.message
end
return hs
