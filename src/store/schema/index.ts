export * from "./event.js";
export * from "./instance.js";
export * from "./membership.js";
export * from "./organization.js";
export * from "./token.js";
export * from "./user.js";
