import { accountSourceIpType } from '../capabilities.js';
import { ApiError, missingParameter } from '../errors.js';
import { buildRule } from '../factories.js';
import { applyHealthCheck, defaultHealthCheck } from '../health-check.js';
import type { RuleRecord } from '../model.js';
import { isIpv6, isLayer7 } from '../model.js';
import type { Params } from '../params.js';
import { allowOnly, isRecord, optArray, optBool, optEnum, optIntInRange, optObject, optString, optStringArray, reqString } from '../params.js';
import { checkSourceIp, ensureUnlocked, liveLb, readTargetType, startTask } from './guards.js';
import type { ActionDefinition } from './types.js';

/**
 * CreateRule (async, tencent-cloud.md §3): HTTP/HTTPS listeners only; each rule gets its own HealthCheck (defaults +
 * given fields). LocationIds are returned at once; the rules appear when the task completes.
 */
const RULE_FIELDS = ['Url', 'Domain', 'Domains', 'SessionExpireTime', 'HealthCheck', 'Scheduler', 'ForwardType', 'DefaultServer', 'TargetType'];

export const createRule: ActionDefinition = {
  async: true,
  run(ctx, params) {
    allowOnly(params, ['LoadBalancerId', 'ListenerId', 'Rules']);
    const { core } = ctx;
    const lbId = reqString(params, 'LoadBalancerId');
    const listenerId = reqString(params, 'ListenerId');
    const lb = core.store.lb(lbId);
    const listener = core.store.listener(lb, listenerId);
    if (!isLayer7(listener.Protocol)) {
      throw new ApiError('InvalidParameter', `Listener ${listenerId} is ${listener.Protocol}; rules can only be created on HTTP/HTTPS listeners.`);
    }
    const rawRules = optArray(params, 'Rules', 50);
    if (!rawRules || rawRules.length === 0) throw missingParameter('Rules');
    const forwardTypes = listener.Protocol === 'HTTPS' ? (['HTTP', 'HTTPS', 'GRPC'] as const) : (['HTTP', 'GRPC'] as const);
    const seen = new Set(listener.Rules.map((r) => `${r.Domain}${r.Url}`));

    const rules: RuleRecord[] = rawRules.map((raw, i) => {
      const label = `Rules.${i}`;
      if (!isRecord(raw)) throw new ApiError('InvalidParameter.FormatError', `${label} must be an object.`);
      const p: Params = raw;
      allowOnly(p, RULE_FIELDS, `${label}.`);
      const url = reqString(p, 'Url', `${label}.Url`);
      if (!url.startsWith('/') || url.length > 200) {
        throw new ApiError('InvalidParameterValue', `${label}.Url must start with "/" and be 1–200 characters.`);
      }
      const domain = optString(p, 'Domain', `${label}.Domain`) ?? optStringArray(p, 'Domains', 50, `${label}.Domains`)?.[0];
      if (!domain) throw missingParameter(`${label}.Domain`);
      if (seen.has(`${domain}${url}`)) throw new ApiError('InvalidParameterValue.Duplicate', `A rule for ${domain}${url} already exists.`);
      seen.add(`${domain}${url}`);
      const forwardType = optEnum(p, 'ForwardType', forwardTypes, `${label}.ForwardType`) ?? 'HTTP';
      const hcCtx = { protocol: listener.Protocol, forwardType, ipv6: isIpv6(lb), defaultSourceIpType: accountSourceIpType(core.capabilities) };
      const hcInput = optObject(p, 'HealthCheck', `${label}.HealthCheck`);
      const healthCheck = hcInput ? applyHealthCheck(hcInput, hcCtx, defaultHealthCheck(hcCtx), `${label}.HealthCheck`) : defaultHealthCheck(hcCtx);
      checkSourceIp(core, lb, healthCheck);
      const session = optIntInRange(p, 'SessionExpireTime', 0, 86400, `${label}.SessionExpireTime`);
      // RuleInput.SessionExpireTime: "设置为0表示关闭会话保持，开启会话保持可取值30~86400" (as ModifyRule).
      if (session !== undefined && session !== 0 && session < 30) {
        throw new ApiError('InvalidParameterValue.Range', `${label}.SessionExpireTime must be 0 or 30–86400.`);
      }
      const scheduler = optEnum(p, 'Scheduler', ['WRR', 'LEAST_CONN', 'IP_HASH'], `${label}.Scheduler`);
      const defaultServer = optBool(p, 'DefaultServer', `${label}.DefaultServer`);
      readTargetType(p, undefined, `${label}.TargetType`);
      return buildRule({ domain, url, forwardType, healthCheck, scheduler, sessionExpireTime: session, defaultServer }, ctx.nowMs);
    });

    ensureUnlocked(core, [lbId]);
    startTask(ctx, 'CreateRule', [lbId], () => {
      const target = core.store.listener(liveLb(core, lbId), listenerId);
      const now = Date.now();
      for (const r of rules) target.Rules.push({ ...r, healthChangedAtMs: now });
    });
    return { LocationIds: rules.map((r) => r.LocationId) };
  },
};
