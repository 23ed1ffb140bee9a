#!/usr/bin/env node
// Validates CloudFormation templates offline with AWS's validator
// (@aws/cloudformation-validate, pinned in package.json): schema, cfn-lint
// and security rules, all bundled. Usage: node infra/cfn-validate.mjs T.json...
// Prints every finding at WARN or above; exits 1 when any is ERROR or FATAL,
// 2 when the validator cannot run.
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
let cfv;
try {
  cfv = require("@aws/cloudformation-validate");
} catch (e) {
  console.error("cfn-validate: @aws/cloudformation-validate is not installed: run `make tools` (" + e.message + ")");
  process.exit(2);
}
const files = process.argv.slice(2);
if (files.length === 0) {
  console.error("usage: node infra/cfn-validate.mjs TEMPLATE.json...");
  process.exit(2);
}
const engine = new cfv.RegoEngine();
let failed = false;
try {
  for (const file of files) {
    const report = engine.validateStandard(new cfv.TemplateFile(file), { severityLevel: "WARN" });
    if (report.status === "ERROR") {
      console.log(`${file}: the validator could not analyse the template`);
      failed = true;
    }
    for (const d of report.diagnostics) {
      const where = d.entity ? `${d.entity.logicalId}${d.propertyPath ? "." + d.propertyPath : ""}` : (d.propertyPath || "");
      console.log(`${file}: [${d.severity}] ${d.ruleId} ${where}: ${d.message}`);
      if (d.severity === "ERROR" || d.severity === "FATAL") failed = true;
    }
    if (report.diagnostics.length === 0) console.log(`${file}: ok`);
  }
} finally {
  engine.free();
}
process.exit(failed ? 1 : 0);
