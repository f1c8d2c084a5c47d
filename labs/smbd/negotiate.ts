// SMB Direct negotiation ([MS-SMBD] 3.1.5.2 send request, 3.1.5.3 send response, 3.1.5.6 passive side receives the
// request, 3.1.5.7 active side receives the response): every check as a rule with its section, the values it
// looked at and pass / fail, and the sizes both sides end up with. Pure functions over bytes: the agents put the
// bytes on the device's QP and hand what arrived here; the negotiation inspector shows the same records.
import {
  NEGOTIATE_REQUEST_SIZE, NEGOTIATE_RESPONSE_SIZE, SMBDIRECT_V1, STATUS_NOT_SUPPORTED, STATUS_SUCCESS,
  decodeNegotiateRequest, decodeNegotiateResponse,
} from './pdu.ts';
import type { NegotiateRequest, NegotiateResponse } from './pdu.ts';
import type { PeerConfig, PeerProfile } from './profiles.ts';

/** [MS-SMBD] 3.1.5.6 / 3.1.5.7 minimums */
export const MIN_RECEIVE_SIZE = 128;
export const MIN_FRAGMENTED_SIZE = 131072;

export interface RuleResult {
  /** stable id ("req.max-receive-size"), the panel's row key and the tests' */
  id: string;
  /** the spec section (or kernel function) the rule comes from */
  section: string;
  /** the rule, for people */
  rule: string;
  /** the value checked */
  value: number;
  pass: boolean;
}

/** What a connection ends up with once negotiation succeeded ([MS-SMBD] 3.1.1.1 Connection). */
export interface NegotiatedSizes {
  maxSendSize: number;
  maxReceiveSize: number;
  maxFragmentedSendSize: number;
  maxFragmentedRecvSize: number;
  maxReadWriteSize: number;
  /** credits the peer granted (the active side's SendCredits from the response; the passive side starts at 0) */
  sendCredits: number;
  /** the peer's CreditsRequested */
  receiveCreditTarget: number;
}

export interface NegotiateOutcome {
  rules: RuleResult[];
  /** accept: go on; reject: respond with STATUS_NOT_SUPPORTED then close; terminate: close without a word */
  outcome: 'accept' | 'reject' | 'terminate';
  sizes?: NegotiatedSizes;
}

/** [MS-SMBD] 3.1.5.2: the active side's request from its own configuration. */
export function negotiateRequestOf(cfg: PeerConfig): NegotiateRequest {
  return {
    minVersion: SMBDIRECT_V1, maxVersion: SMBDIRECT_V1, reserved: 0, creditsRequested: cfg.sendCreditTarget,
    preferredSendSize: cfg.maxSendSize, maxReceiveSize: cfg.maxReceiveSize, maxFragmentedSize: cfg.maxFragmentedRecvSize,
  };
}

const atLeast = (strict: boolean, v: number, min: number) => (strict ? v > min : v >= min);

/** Both sides' sizes after a successful exchange (3.1.5.6 / 3.1.5.7): MaxReceiveSize = min(own, peer
 *  PreferredSendSize) with a floor of 128, MaxSendSize = min(own, peer MaxReceiveSize), the peer's MaxFragmentedSize
 *  bounds what this side sends. */
function sizesOf(cfg: PeerConfig, peer: { preferredSendSize: number; maxReceiveSize: number; maxFragmentedSize: number },
  maxReadWriteSize: number, sendCredits: number, receiveCreditTarget: number): NegotiatedSizes {
  return {
    maxReceiveSize: Math.max(MIN_RECEIVE_SIZE, Math.min(cfg.maxReceiveSize, peer.preferredSendSize)),
    maxSendSize: Math.min(cfg.maxSendSize, peer.maxReceiveSize),
    maxFragmentedSendSize: peer.maxFragmentedSize,
    maxFragmentedRecvSize: cfg.maxFragmentedRecvSize,
    maxReadWriteSize, sendCredits, receiveCreditTarget,
  };
}

/** [MS-SMBD] 3.1.5.6: the passive side checks a received negotiate request (`len` bytes of `bytes`). */
export function checkNegotiateRequest(bytes: Uint8Array, profile: PeerProfile, cfg: PeerConfig): NegotiateOutcome & { request?: NegotiateRequest } {
  const rules: RuleResult[] = [];
  const r = (id: string, section: string, rule: string, value: number, pass: boolean) => { rules.push({ id, section, rule, value, pass }); return pass; };
  if (!r('req.length', '[MS-SMBD] 3.1.5.6', `message length >= ${NEGOTIATE_REQUEST_SIZE}`, bytes.length, bytes.length >= NEGOTIATE_REQUEST_SIZE)) {
    return { rules, outcome: 'terminate' };
  }
  const q = decodeNegotiateRequest(bytes);
  const versionOk = q.minVersion <= SMBDIRECT_V1 && q.maxVersion >= SMBDIRECT_V1;
  const hex4 = (v: number) => `0x${v.toString(16).padStart(4, '0')}`;
  // the value shown is MinVersion; the rule names both
  if (!r('req.version', '[MS-SMBD] 3.1.5.6', `MinVersion (${hex4(q.minVersion)}) <= 0x0100 <= MaxVersion (${hex4(q.maxVersion)})`, q.minVersion, versionOk)) {
    return { rules, outcome: profile.versionMismatch === 'terminate' ? 'terminate' : 'reject', request: q };
  }
  const strict = profile.strictMinimums;
  const src = strict ? 'ksmbd smb_direct_check_recvmsg' : '[MS-SMBD] 3.1.5.6';
  let ok = r('req.credits-requested', '[MS-SMBD] 3.1.5.6', 'CreditsRequested > 0', q.creditsRequested, q.creditsRequested > 0);
  ok = r('req.max-receive-size', src, `MaxReceiveSize ${strict ? '>' : '>='} ${MIN_RECEIVE_SIZE}`, q.maxReceiveSize, atLeast(strict, q.maxReceiveSize, MIN_RECEIVE_SIZE)) && ok;
  ok = r('req.max-fragmented-size', src, `MaxFragmentedSize ${strict ? '>' : '>='} ${MIN_FRAGMENTED_SIZE}`, q.maxFragmentedSize, atLeast(strict, q.maxFragmentedSize, MIN_FRAGMENTED_SIZE)) && ok;
  if (!ok) return { rules, outcome: 'terminate', request: q };
  return {
    rules, outcome: 'accept', request: q,
    sizes: sizesOf(cfg, q, cfg.maxReadWriteSize, 0, q.creditsRequested),
  };
}

/** [MS-SMBD] 3.1.5.3: the passive side's response; `receiveCredits` = receives it has posted (CreditsGranted). */
export function negotiateResponseOf(cfg: PeerConfig, sizes: NegotiatedSizes, receiveCredits: number): NegotiateResponse {
  return {
    minVersion: SMBDIRECT_V1, maxVersion: SMBDIRECT_V1, negotiatedVersion: SMBDIRECT_V1, reserved: 0,
    creditsRequested: cfg.sendCreditTarget, creditsGranted: receiveCredits, status: STATUS_SUCCESS,
    maxReadWriteSize: sizes.maxReadWriteSize, preferredSendSize: sizes.maxSendSize, maxReceiveSize: sizes.maxReceiveSize,
    maxFragmentedSize: cfg.maxFragmentedRecvSize,
  };
}

/** [MS-SMBD] 3.1.5.6: the response to a request whose version range misses 1.0 (every other field 0). */
export function notSupportedResponse(): NegotiateResponse {
  return {
    minVersion: SMBDIRECT_V1, maxVersion: SMBDIRECT_V1, negotiatedVersion: 0, reserved: 0, creditsRequested: 0, creditsGranted: 0,
    status: STATUS_NOT_SUPPORTED, maxReadWriteSize: 0, preferredSendSize: 0, maxReceiveSize: 0, maxFragmentedSize: 0,
  };
}

/** [MS-SMBD] 3.1.5.7: the active side checks the negotiate response. */
export function checkNegotiateResponse(bytes: Uint8Array, cfg: PeerConfig): NegotiateOutcome & { response?: NegotiateResponse } {
  const rules: RuleResult[] = [];
  const r = (id: string, rule: string, value: number, pass: boolean) => { rules.push({ id, section: '[MS-SMBD] 3.1.5.7', rule, value, pass }); return pass; };
  if (!r('resp.length', `message length >= ${NEGOTIATE_RESPONSE_SIZE}`, bytes.length, bytes.length >= NEGOTIATE_RESPONSE_SIZE)) return { rules, outcome: 'terminate' };
  const p = decodeNegotiateResponse(bytes);
  let ok = r('resp.negotiated-version', 'NegotiatedVersion = 0x0100', p.negotiatedVersion, p.negotiatedVersion === SMBDIRECT_V1);
  ok = r('resp.status', 'Status = STATUS_SUCCESS', p.status, p.status === STATUS_SUCCESS) && ok;
  ok = r('resp.max-receive-size', `MaxReceiveSize >= ${MIN_RECEIVE_SIZE}`, p.maxReceiveSize, p.maxReceiveSize >= MIN_RECEIVE_SIZE) && ok;
  ok = r('resp.max-fragmented-size', `MaxFragmentedSize >= ${MIN_FRAGMENTED_SIZE}`, p.maxFragmentedSize, p.maxFragmentedSize >= MIN_FRAGMENTED_SIZE) && ok;
  ok = r('resp.credits-granted', 'CreditsGranted > 0', p.creditsGranted, p.creditsGranted > 0) && ok;
  ok = r('resp.credits-requested', 'CreditsRequested > 0', p.creditsRequested, p.creditsRequested > 0) && ok;
  ok = r('resp.preferred-send-size', `PreferredSendSize <= own MaxReceiveSize (${cfg.maxReceiveSize})`, p.preferredSendSize, p.preferredSendSize <= cfg.maxReceiveSize) && ok;
  if (!ok) return { rules, outcome: 'terminate', response: p };
  return {
    rules, outcome: 'accept', response: p,
    sizes: sizesOf(cfg, p, Math.min(cfg.maxReadWriteSize, p.maxReadWriteSize), p.creditsGranted, p.creditsRequested),
  };
}
