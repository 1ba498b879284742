// A Stryker reporter that writes every mutant the tests let through (Survived, NoCoverage) to
// reports/mutation/<run>.survivors.jsonl the moment it is known, so tests can be written while a long run goes on.
import { appendFileSync, mkdirSync, writeFileSync } from "node:fs";
import { dirname, relative } from "node:path";
import { PluginKind, declareFactoryPlugin } from "@stryker-mutator/api/plugin";
import { runName } from "../../stryker.config.mjs";

const OUT = `reports/mutation/${runName(process.env.GATEHOUSE_MUTATION_GROUP?.split(","))}.survivors.jsonl`;
const LET_THROUGH = new Set(["Survived", "NoCoverage"]);

function liveSurvivorsReporter() {
  mkdirSync(dirname(OUT), { recursive: true });
  writeFileSync(OUT, "");
  return {
    onMutantTested(result) {
      if (!LET_THROUGH.has(result.status)) return;
      const { start, end } = result.location;
      const entry = {
        // Stryker's reporter API gives 1-based lines and columns already (as an editor counts them). The end says which
        // part of the line the replacement stands for: `true` for a whole condition or for one of its terms.
        at: `${relative(process.cwd(), result.fileName)}:${start.line}:${start.column}`,
        to: `${end.line}:${end.column}`,
        status: result.status,
        mutator: result.mutatorName,
        replacement: result.replacement,
        tests: result.testsCompleted ?? 0,
      };
      appendFileSync(OUT, `${JSON.stringify(entry)}\n`);
    },
  };
}
liveSurvivorsReporter.inject = [];

export const strykerPlugins = [declareFactoryPlugin(PluginKind.Reporter, "live-survivors", liveSurvivorsReporter)];
