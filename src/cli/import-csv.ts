/**
 * CSV input of `gatehouse import`: RFC 4180 records (comma-separated, fields in double quotes may hold commas,
 * line breaks and doubled quotes; CRLF or LF; a UTF-8 byte order mark is ignored), a header row naming the columns,
 * and the mapping of columns to the Connect JSON form of CreateHumanUserRequest (README, "Migrating users").
 */

/** A row's problem found before anything is sent: reported like a server's error of that row. */
export class RowError extends Error {
  constructor(
    message: string,
    readonly field: string,
  ) {
    super(message);
  }
}

/** Splits CSV text into records, chunk by chunk: `push` returns the records completed so far, `end` the last one. */
export function createCsvSplitter() {
  let field = "";
  let record: string[] = [];
  let quoted = false;
  // Whether the field's opening quote closed and the next character decides (a doubled quote, or the end of the field).
  let quoteClosed = false;
  let started = false;
  let bomChecked = false;
  const endField = () => {
    record.push(field);
    field = "";
    quoted = false;
    quoteClosed = false;
    started = false;
  };
  return {
    push(text: string): string[][] {
      const records: string[][] = [];
      let i = 0;
      if (!bomChecked && text.length > 0) {
        bomChecked = true;
        if (text.charCodeAt(0) === 0xfeff) i = 1;
      }
      for (; i < text.length; i++) {
        const c = text[i]!;
        if (quoted && !quoteClosed) {
          if (c === '"') quoteClosed = true;
          else field += c;
          continue;
        }
        if (quoteClosed && c === '"') {
          field += '"';
          quoteClosed = false;
          continue;
        }
        if (c === ",") endField();
        else if (c === "\n") {
          endField();
          records.push(record);
          record = [];
        } else if (c === "\r") {
          // Part of a CRLF, or a stray one: line ends are LF.
        } else if (c === '"' && !started) {
          quoted = true;
          started = true;
        } else {
          field += c;
          started = true;
        }
      }
      return records;
    },
    /** The last record, when the text does not end with a line break. */
    end(): string[][] {
      // A field holds characters only once started: not started, it is empty.
      if (!started && record.length === 0) return [];
      endField();
      const last = record;
      // Stryker disable next-line ArrayDeclaration: end comes once, at the end of the text: nothing reads the record after it
      record = [];
      return [last];
    },
  };
}

/** The column names, as written in a header (`user_name`, `userName`, `User Name` are one), and where each goes. */
const COLUMNS = {
  username: "user_name",
  externalid: "external_id",
  firstname: "first_name",
  lastname: "last_name",
  nickname: "nick_name",
  displayname: "display_name",
  preferredlanguage: "preferred_language",
  gender: "gender",
  email: "email",
  emailverified: "email_verified",
  phone: "phone",
  phoneverified: "phone_verified",
  password: "password",
  hashedpassword: "hashed_password",
  passwordchangerequired: "password_change_required",
  otpcode: "otp_code",
  idpconfigid: "idp_config_id",
  idpexternaluserid: "idp_external_user_id",
  idpdisplayname: "idp_display_name",
} as const;

type Column = (typeof COLUMNS)[keyof typeof COLUMNS];
export const CSV_COLUMNS: readonly Column[] = Object.values(COLUMNS);

const keyOf = (name: string) => name.toLowerCase().replace(/[^a-z0-9]/g, "");

/** A header row that cannot be mapped: the command's usage is wrong, nothing is sent. */
export class CsvHeaderError extends Error {}

/** Reads the header row; throws CsvHeaderError for an unknown or repeated column, or without user_name and email. */
export function csvHeader(names: string[]): Column[] {
  const columns = names.map((name) => {
    const column = COLUMNS[keyOf(name) as keyof typeof COLUMNS];
    if (!column) throw new CsvHeaderError(`unknown CSV column "${name}"; the columns are: ${CSV_COLUMNS.join(", ")}`);
    return column;
  });
  const repeated = columns.find((column, i) => columns.indexOf(column) !== i);
  if (repeated) throw new CsvHeaderError(`the CSV column ${repeated} appears twice`);
  for (const required of ["user_name", "email"] as const) {
    if (!columns.includes(required)) throw new CsvHeaderError(`the CSV header has no ${required} column`);
  }
  return columns;
}

function flag(value: string, column: Column): boolean {
  const word = value.trim().toLowerCase();
  if (["", "false", "0", "no"].includes(word)) return false;
  if (["true", "1", "yes"].includes(word)) return true;
  throw new RowError(`${column} must be true or false (or 1/0, yes/no, empty), got "${value.slice(0, 40)}"`, column);
}

function gender(value: string): string | undefined {
  const word = value.trim().toUpperCase().replace(/^GENDER_/, "");
  if (word === "" || word === "UNSPECIFIED") return undefined;
  if (["FEMALE", "MALE", "DIVERSE"].includes(word)) return `GENDER_${word}`;
  throw new RowError(`gender must be female, male, diverse or empty, got "${value.slice(0, 40)}"`, "gender");
}

/**
 * One CSV record as the Connect JSON of CreateHumanUserRequest plus `externalId` — what a JSON Lines row holds, so a
 * rejected CSV row goes to the report in the same form and can be fixed and fed back as JSON Lines. Empty cells are
 * left out (an empty phone is no phone, an empty hashed_password no hash).
 */
export function csvRecordToJson(columns: readonly Column[], record: string[]): Record<string, unknown> {
  if (record.length !== columns.length) throw new RowError(`the row has ${record.length} fields, the header ${columns.length}`, "row");
  const cell = new Map(columns.map((column, i) => [column, record[i]!]));
  const text = (column: Column) => cell.get(column) ?? "";
  const some = <T extends Record<string, unknown>>(value: T) => Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined && v !== "" && v !== false));
  const profile = some({
    firstName: text("first_name"),
    lastName: text("last_name"),
    nickName: text("nick_name"),
    displayName: text("display_name"),
    preferredLanguage: text("preferred_language"),
    gender: gender(text("gender")),
  });
  const json: Record<string, unknown> = {
    userName: text("user_name"),
    profile,
    email: some({ email: text("email"), isEmailVerified: flag(text("email_verified"), "email_verified") }),
  };
  if (text("phone") !== "") json["phone"] = some({ phone: text("phone"), isPhoneVerified: flag(text("phone_verified"), "phone_verified") });
  if (text("password") !== "") json["password"] = text("password");
  if (text("hashed_password") !== "") json["hashedPassword"] = { value: text("hashed_password") };
  if (flag(text("password_change_required"), "password_change_required")) json["passwordChangeRequired"] = true;
  if (text("otp_code") !== "") json["otpCode"] = text("otp_code");
  if (text("idp_config_id") !== "" || text("idp_external_user_id") !== "") {
    json["idps"] = [some({ configId: text("idp_config_id"), externalUserId: text("idp_external_user_id"), displayName: text("idp_display_name") })];
  }
  if (text("external_id") !== "") json["externalId"] = text("external_id");
  return json;
}
