import type { ServiceImpl } from "@connectrpc/connect";
import type { SmtpService } from "../../../gen/gatehouse/admin/v1/smtp_pb.js";
import { createSmtpConfig, removeSmtpConfig, setSmtpPassword, testSmtpConfig, updateSmtpConfig } from "../../commands/smtp.js";
import type { Deps } from "../../context.js";
import type { SmtpClientOptions } from "../../notify/smtp-transport.js";
import { getSmtpConfig } from "../../queries/smtp.js";
import { callerOf } from "../caller.js";
import { toDetailsMessage } from "../convert.js";

const settingsOf = (request: { senderAddress: string; senderName: string; tls: boolean; host: string; user: string }) => ({
  senderAddress: request.senderAddress,
  senderName: request.senderName,
  tls: request.tls,
  host: request.host,
  user: request.user,
});

export function createSmtpService(deps: Deps, client: SmtpClientOptions): ServiceImpl<typeof SmtpService> {
  return {
    async createSmtpConfig(request, context) {
      const { details } = await createSmtpConfig(deps, callerOf(context), { ...settingsOf(request), password: request.password });
      return { details: toDetailsMessage(details) };
    },
    async getSmtpConfig(_request, context) {
      const { settings, hasPassword, details } = await getSmtpConfig(deps, callerOf(context));
      return { config: { ...settingsOf(settings), hasPassword, details: toDetailsMessage(details) } };
    },
    async updateSmtpConfig(request, context) {
      const { details, passwordDropped } = await updateSmtpConfig(deps, callerOf(context), { ...settingsOf(request), expectedSequence: request.expectedSequence });
      return { details: toDetailsMessage(details), passwordDropped };
    },
    async setSmtpPassword(request, context) {
      const { details } = await setSmtpPassword(deps, callerOf(context), request);
      return { details: toDetailsMessage(details) };
    },
    async testSmtpConfig(request, context) {
      return testSmtpConfig(deps, callerOf(context), client, {
        receiverAddress: request.receiverAddress,
        ...(request.config ? { config: settingsOf(request.config) } : {}),
        password: request.password,
      });
    },
    async removeSmtpConfig(request, context) {
      const { details } = await removeSmtpConfig(deps, callerOf(context), request);
      return { details: toDetailsMessage(details) };
    },
  };
}
