// Package tags owns the one conversion between the tag lists of the AWS
// APIs ferry calls (each service has its own Tag type) and the maps ferry
// reasons with: From* read a resource's tags into a map; EC2, ASG and
// CloudWatch turn a map into the list a create call takes, sorted by key
// so the same tags always make the same request.
//
// What the tags mean (ProjectName, DeployWith, ...) is package naming's.
package tags
