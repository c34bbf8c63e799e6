//! The `fleet::iam` code: IAM, which fleetc never emits (R8), so a fleet cannot declare it. Raised
//! while reading fleet.kdl in `src/model/resolve/reader.rs`, and by `src/check/tofu.rs`.

codes! {
    IAM = "fleet::iam::not-expressible", Error, Some("R8"),
    Some("the credential that builds the fleet holds no IAM permission, since writing IAM needs a right whose holder can grant itself anything; IAM stays manual and fleetc never emits it (R8)"),
"## What it does
Reports any attempt to declare IAM (applications, policies, API keys, permission sets) in
fleet.kdl. There is no node for it: this code names the refusal.

## Why (R8)
Writing IAM needs a permission whose holder can grant itself anything. The credential that
builds the fleet therefore holds none, and IAM stays a manual, reviewed operation.

## Example
    environment \"staging\" {
        iam-policy \"ci\" { … }

## Instead
Create IAM applications and policies by hand in the cloud console; give fleetc's apply step
the resulting credential through its environment variables (docs/apply.md).
";
}
